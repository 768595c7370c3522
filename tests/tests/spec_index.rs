//! `docs/spec-index.md` against the code and the spec: every `path::name`
//! reference in it names a file that exists and a definition in that file, and
//! the index covers the spec: each of its sections (a heading of the same text),
//! each endpoint, each of the 32 messages (with the `AchError` variant of that
//! number), each row of its tables (states and transitions, feeds, limits, the
//! fields of the envelope, the transaction, the customer and the status change),
//! and every link to `docs/decisions.md` names one of its headings.
//!
//! A reference is a code span `` `path::name` ``: a file path relative to the
//! repository root ending in `.rs`, `.c`, `.h`, `.mjs` or `.js`, then `::`, then
//! what the file defines:
//!
//! - Rust: `name` is a `fn`, `struct`, `enum`, `trait`, `type`, `union`,
//!   `const`, `static`, `mod` or `macro_rules!`; `Type::member` needs `Type`
//!   defined or implemented in the file (`struct Type`, `impl … Type`) and
//!   `member` a `fn`, a `const` or an enum variant in it.
//! - C: `name(` (a function, a test of `tests/c/`).
//! - JavaScript: a test named `name` (`test('name'`, `it("name"`, backquotes too).
//!
//! The spec is read from `../shared/spec/ach-service-spec.md` beside the
//! repository (override with `ACH_SPEC`).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use ach_core::error::catalogue_samples;
use ach_tests::repo_root;

const INDEX: &str = "docs/spec-index.md";
const DECISIONS: &str = "docs/decisions.md";

/// Sections of the spec whose tables are not checked row by row: the merchant
/// application's field tables repeat names under bold labels (the index maps it
/// group by group), and the error table has its own, stricter check.
const TABLES_NOT_CHECKED: [&str; 2] = ["Merchant (submission)", "Errors"];

/// Sections whose tables are keyed by their first two cells (a state alone
/// repeats: "A Pending" has two rows), not by the first alone.
const TWO_CELL_KEYS: [&str; 1] = ["States and transitions"];

fn spec_path() -> PathBuf {
    std::env::var_os("ACH_SPEC")
        .map_or_else(|| repo_root().join("../shared/spec/ach-service-spec.md"), PathBuf::from)
}

fn spec() -> String {
    let path = spec_path();
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the spec {} (set ACH_SPEC): {e}", path.display()))
}

fn index() -> String {
    std::fs::read_to_string(repo_root().join(INDEX)).unwrap_or_else(|e| panic!("cannot read {INDEX}: {e}"))
}

/// Panic with every problem, one a line, if there is any.
fn report(what: &str, problems: &[String]) {
    assert!(problems.is_empty(), "{what} ({} problems):\n{}", problems.len(), problems.join("\n"));
}

/// [`report`] the `wanted` items not in `found`, each as `problem` says.
fn report_missing(what: &str, wanted: &[String], found: &[&str], problem: impl Fn(&str) -> String) {
    let problems: Vec<String> =
        wanted.iter().filter(|w| !found.contains(&w.as_str())).map(|w| problem(w)).collect();
    report(what, &problems);
}

// ---------------------------------------------------------------------------
// Markdown: code spans, headings, sections, table rows.

/// The code spans of one line (single backquotes; the index has no others).
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The text of a heading line (`## Errors` → `Errors`), any level.
fn heading(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches('#');
    (rest.len() < line.len() && rest.starts_with(' ')).then(|| rest.trim())
}

/// A document cut at its `##` and `###` headings: `(heading, lines with their
/// 1-based numbers)`; the lines before the first such heading are under "".
fn sections(text: &str) -> Vec<(String, Vec<(usize, &str)>)> {
    let mut out: Vec<(String, Vec<(usize, &str)>)> = vec![(String::new(), Vec::new())];
    for (i, line) in text.lines().enumerate() {
        match heading(line) {
            Some(h) if line.starts_with("##") => out.push((h.to_owned(), Vec::new())),
            _ => out.last_mut().unwrap().1.push((i + 1, line)),
        }
    }
    out
}

/// The cells of a table row, trimmed; `None` for a line that is no row or a
/// separator row (`|---|---|`).
fn cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let cells: Vec<String> = inner.split('|').map(|c| c.trim().to_owned()).collect();
    let separator = cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')));
    (!separator).then_some(cells)
}

/// A cell compared without its code quotes: `` `id` `` and `id` are one key.
fn plain(cell: &str) -> String {
    cell.replace('`', "")
}

/// The data rows of every table in `lines` (each table's header row dropped).
fn data_rows(lines: &[(usize, &str)]) -> Vec<(usize, Vec<String>)> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for &(n, line) in lines {
        let is_row = line.trim_start().starts_with('|');
        if !is_row {
            in_table = false;
            continue;
        }
        let first = !in_table;
        in_table = true;
        if first {
            continue; // the header
        }
        if let Some(c) = cells(line) {
            rows.push((n, c));
        }
    }
    rows
}

// ---------------------------------------------------------------------------
// References and the definitions they name.

/// One `path::name` reference of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    line: usize,
    path: String,
    name: String,
}

impl Reference {
    fn at(&self) -> String {
        format!("{INDEX}:{}: `{}::{}`", self.line, self.path, self.name)
    }
}

const EXTENSIONS: [&str; 5] = [".rs", ".c", ".h", ".mjs", ".js"];

/// Every reference of `text`; a code span that looks like one but is not well
/// formed (`core/src/limits::check`, `x.rs::`) is an error.
fn references(text: &str) -> (Vec<Reference>, Vec<String>) {
    let (mut refs, mut errors) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        for span in code_spans(line) {
            let Some((path, name)) = span.split_once("::") else { continue };
            if !path.contains('/') && !EXTENSIONS.iter().any(|e| path.ends_with(e)) {
                continue; // `Engine::prepare`, `AchError::code`: a name, no file
            }
            let well_formed = EXTENSIONS.iter().any(|e| path.ends_with(e))
                && !path.starts_with('/')
                && !path.split('/').any(|p| p.is_empty() || p == "..")
                && path.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
                && !name.trim().is_empty()
                && name.trim() == name;
            if well_formed {
                refs.push(Reference { line: i + 1, path: path.to_owned(), name: name.to_owned() });
            } else {
                errors.push(format!(
                    "{INDEX}:{}: `{span}` is not a reference: write `path/to/file.rs::name` \
                     (a path from the repository root, ending in {})",
                    i + 1,
                    EXTENSIONS.join(", ")
                ));
            }
        }
    }
    (refs, errors)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && s.chars().all(is_ident)
}

/// Rust source without its comment lines, so a name mentioned in a doc comment
/// does not count as defined.
fn rust_code(source: &str) -> String {
    source.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Whether `code` has `keyword` (as a word), whitespace, then `name` (as a word).
fn keyword_then(code: &str, keyword: &str, name: &str) -> bool {
    code.match_indices(keyword).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        if before.is_some_and(is_ident) {
            return false;
        }
        let rest = &code[at + keyword.len()..];
        let trimmed = rest.trim_start();
        if trimmed.len() == rest.len() {
            return false; // `fnord`, not `fn ord`
        }
        trimmed.strip_prefix(name).is_some_and(|after| !after.starts_with(is_ident))
    })
}

const ITEM_KEYWORDS: [&str; 10] =
    ["fn", "struct", "enum", "trait", "type", "union", "const", "static", "mod", "macro_rules!"];

fn defines_item(code: &str, name: &str) -> bool {
    ITEM_KEYWORDS.iter().any(|k| keyword_then(code, k, name))
}

/// Whether `word` occurs in `line` as a whole word.
fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        !line[..at].chars().next_back().is_some_and(is_ident)
            && !line[at + word.len()..].starts_with(is_ident)
    })
}

/// `Type` defined in `code`, or implemented there (`impl Type`, `impl<'a>
/// Type<'a>`, `impl Display for Type`).
fn defines_owner(code: &str, owner: &str) -> bool {
    ["struct", "enum", "trait", "type", "union", "mod"].iter().any(|k| keyword_then(code, k, owner))
        || code.lines().any(|l| l.trim_start().starts_with("impl") && has_word(l, owner))
}

/// A member of a type: a `fn`, a `const`, or an enum variant (a line that starts
/// with the name followed by `,`, ` {`, `(`, ` =` or nothing).
fn defines_member(code: &str, member: &str) -> bool {
    keyword_then(code, "fn", member)
        || keyword_then(code, "const", member)
        || code.lines().any(|l| {
            l.trim().strip_prefix(member).is_some_and(|after| {
                after.is_empty() || [",", " {", "{", "(", " ="].iter().any(|s| after.starts_with(s))
            })
        })
}

/// Why `name` is not defined in the Rust `source`, or `None` when it is.
fn rust_problem(source: &str, name: &str) -> Option<String> {
    let parts: Vec<&str> = name.split("::").collect();
    if let Some(bad) = parts.iter().find(|p| !is_identifier(p)) {
        return Some(format!("`{bad}` is not a Rust identifier"));
    }
    let code = rust_code(source);
    let (member, owners) = parts.split_last().unwrap();
    if let Some(owner) = owners.iter().find(|o| !defines_owner(&code, o)) {
        return Some(format!("the file defines no type `{owner}` (no struct, enum, trait or mod, no impl)"));
    }
    let found = if owners.is_empty() { defines_item(&code, member) } else { defines_member(&code, member) };
    (!found).then(|| {
        if owners.is_empty() {
            format!("the file defines no `{member}` (no fn, struct, enum, trait, type, const, static or mod)")
        } else {
            format!(
                "the file defines no `{member}` of `{}` (no fn, const or enum variant)",
                owners.join("::")
            )
        }
    })
}

/// Why the C function `name` is not in `source`, or `None`.
fn c_problem(source: &str, name: &str) -> Option<String> {
    if !is_identifier(name) {
        return Some(format!("`{name}` is not a C identifier"));
    }
    let call = format!("{name}(");
    let found =
        source.match_indices(&call).any(|(at, _)| !source[..at].chars().next_back().is_some_and(is_ident));
    (!found).then(|| format!("no `{name}(` in the file"))
}

/// Why no JavaScript test is named `name` in `source`, or `None`.
fn js_problem(source: &str, name: &str) -> Option<String> {
    let found = ["test(", "it("]
        .iter()
        .any(|f| ['\'', '"', '`'].iter().any(|q| source.contains(&format!("{f}{q}{name}{q}"))));
    (!found).then(|| format!("no test('{name}', …) or it('{name}', …) in the file"))
}

/// Why `r` does not resolve against the files under `root`, or `None`.
fn problem(root: &std::path::Path, r: &Reference) -> Option<String> {
    let file = root.join(&r.path);
    let source = match std::fs::read_to_string(&file) {
        Ok(s) => s,
        Err(e) => return Some(format!("cannot read the file: {e}")),
    };
    if r.path.ends_with(".rs") {
        rust_problem(&source, &r.name)
    } else if r.path.ends_with(".c") || r.path.ends_with(".h") {
        c_problem(&source, &r.name)
    } else {
        js_problem(&source, &r.name)
    }
}

// ---------------------------------------------------------------------------
// The tests.

#[test]
fn every_reference_names_a_file_and_a_definition_that_exist() {
    let (refs, mut problems) = references(&index());
    assert!(refs.len() > 100, "{INDEX} holds only {} references: is the parser reading it?", refs.len());
    let root = repo_root();
    for r in &refs {
        if let Some(why) = problem(&root, r) {
            problems.push(format!("{}: {why}", r.at()));
        }
    }
    report(&format!("references in {INDEX} that no longer resolve (rename them there)"), &problems);
}

#[test]
fn every_section_of_the_spec_has_its_heading_in_the_index() {
    let spec = spec();
    let index = index();
    let headings: Vec<&str> = index.lines().filter_map(heading).collect();
    let spec_sections: Vec<String> =
        sections(&spec).into_iter().map(|(h, _)| h).filter(|h| !h.is_empty()).collect();
    assert!(spec_sections.len() > 10, "only {} sections found in the spec", spec_sections.len());
    report_missing("spec sections missing from the index", &spec_sections, &headings, |h| {
        format!("the spec's section \"{h}\" has no heading \"{h}\" in {INDEX}")
    });
}

/// The endpoints the spec's "Endpoints" section lists: every code span that is
/// a method and a path (`POST /transactions`, `GET /events/{new_pointer}`).
fn spec_endpoints(spec: &str) -> Vec<String> {
    let sections = sections(spec);
    let mut in_endpoints = false;
    let mut out = Vec::new();
    for (heading, lines) in &sections {
        // "### Create transaction" and the others are under "## Endpoints": the
        // endpoints run until the next second-level section.
        if heading == "Endpoints" {
            in_endpoints = true;
        } else if in_endpoints && spec.contains(&format!("\n## {heading}\n")) {
            in_endpoints = false;
        }
        if !in_endpoints {
            continue;
        }
        for (_, line) in lines {
            for span in code_spans(line) {
                let method = span.split(' ').next().unwrap_or("");
                let is_endpoint = ["GET", "POST", "PUT", "DELETE", "PATCH"].contains(&method)
                    && span[method.len()..].starts_with(" /");
                if is_endpoint && !out.contains(&span.to_owned()) {
                    out.push(span.to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn every_endpoint_of_the_spec_is_indexed() {
    let endpoints = spec_endpoints(&spec());
    assert!(endpoints.len() >= 9, "only {} endpoints found in the spec: {endpoints:?}", endpoints.len());
    let index = index();
    let in_rows: Vec<&str> =
        index.lines().filter(|l| l.trim_start().starts_with('|')).flat_map(code_spans).collect();
    report_missing("spec endpoints missing from the index", &endpoints, &in_rows, |e| {
        format!("the spec's endpoint `{e}` is in no table row of {INDEX}")
    });
}

/// The spec's messages: the rows `| N | text |` of its "Errors" section.
fn spec_messages(spec: &str) -> Vec<(u16, String)> {
    let sections = sections(spec);
    let Some((_, lines)) = sections.iter().find(|(h, _)| h == "Errors") else {
        panic!("the spec has no section \"Errors\"");
    };
    data_rows(lines)
        .into_iter()
        .filter_map(|(_, c)| Some((c.first()?.parse().ok()?, c.get(1)?.clone())))
        .collect()
}

/// The variant name of an error: `AlreadyReversed { .. }` → `AlreadyReversed`.
fn variant(e: &ach_core::AchError) -> String {
    format!("{e:?}").chars().take_while(|c| is_ident(*c)).collect()
}

#[test]
fn every_message_of_the_catalogue_is_indexed_with_its_variant() {
    let messages = spec_messages(&spec());
    let catalogue = catalogue_samples();
    assert_eq!(
        messages.len(),
        catalogue.len(),
        "the spec lists {} messages, core/src/error.rs's catalogue {}",
        messages.len(),
        catalogue.len()
    );
    let index = index();
    let rows: Vec<Vec<String>> = index.lines().filter_map(cells).collect();
    let mut problems = Vec::new();
    for ((number, text), error) in messages.iter().zip(&catalogue) {
        assert_eq!(*number, error.code(), "the spec's messages are not numbered 1, 2, 3, …");
        let reference = format!("core/src/error.rs::AchError::{}", variant(error));
        let row =
            rows.iter().find(|c| c.first().is_some_and(|n| *n == number.to_string()) && c.contains(text));
        match row {
            None => problems.push(format!(
                "message {number} (\"{text}\") has no row `| {number} | {text} | …` in {INDEX}"
            )),
            Some(c) if !c.iter().any(|cell| cell.contains(&format!("`{reference}`"))) => problems.push(
                format!("the row of message {number} in {INDEX} does not name its variant `{reference}`"),
            ),
            Some(_) => {}
        }
    }
    report("messages missing from the index", &problems);
}

#[test]
fn every_row_of_the_spec_tables_is_indexed_in_its_section() {
    let spec = spec();
    let index = index();
    let index_sections = sections(&index);
    let mut problems = Vec::new();
    let mut checked = 0;
    for (heading, lines) in sections(&spec) {
        if heading.is_empty() || TABLES_NOT_CHECKED.contains(&heading.as_str()) {
            continue;
        }
        let width = if TWO_CELL_KEYS.contains(&heading.as_str()) { 2 } else { 1 };
        let ours: Vec<Vec<String>> = index_sections
            .iter()
            .filter(|(h, _)| *h == heading)
            .flat_map(|(_, l)| l.iter().filter_map(|(_, line)| cells(line)))
            .map(|c| c.iter().map(|x| plain(x)).collect())
            .collect();
        for (n, row) in data_rows(&lines) {
            let key: Vec<String> = row.iter().take(width).map(|c| plain(c)).collect();
            checked += 1;
            if !ours.iter().any(|c| c.len() >= width && c[..width] == key[..]) {
                problems.push(format!(
                    "spec line {n} (section \"{heading}\"): no row starting `| {} |` under the heading \
                     \"{heading}\" of {INDEX}",
                    key.join(" | ")
                ));
            }
        }
    }
    assert!(checked > 30, "only {checked} table rows found in the spec");
    report("spec table rows missing from the index", &problems);
}

/// GitHub's anchor of a heading: lower case, spaces to `-`, other punctuation
/// dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_to_the_decisions_names_one_of_its_headings() {
    let decisions = std::fs::read_to_string(repo_root().join(DECISIONS)).unwrap();
    let anchors: Vec<String> = decisions.lines().filter_map(heading).map(anchor).collect();
    let index = index();
    let mut problems = Vec::new();
    let mut links = 0;
    for (i, line) in index.lines().enumerate() {
        for (at, _) in line.match_indices("(decisions.md#") {
            let rest = &line[at + "(decisions.md#".len()..];
            let target = &rest[..rest.find(')').unwrap_or(rest.len())];
            links += 1;
            if !anchors.iter().any(|a| a == target) {
                problems
                    .push(format!("{INDEX}:{}: `decisions.md#{target}` is no heading of {DECISIONS}", i + 1));
            }
        }
    }
    assert!(links > 10, "only {links} links to {DECISIONS} in {INDEX}");
    report("links to headings that no longer exist", &problems);
}

/// The checker itself: it accepts what exists and names what does not.
#[test]
fn the_checker_tells_a_defined_name_from_a_missing_one() {
    let rust =
        "/// fn in_a_comment() {}\npub(crate) const fn check_daily() {}\npub enum Kind {\n    One,\n    \
                Two { x: u8 },\n}\nimpl<'a> WriteContext<'a> {\n    fn apply(&self) {}\n}\nstruct Refusal;\n";
    assert_eq!(rust_problem(rust, "check_daily"), None);
    assert_eq!(rust_problem(rust, "Kind::Two"), None);
    assert_eq!(rust_problem(rust, "WriteContext::apply"), None);
    assert_eq!(rust_problem(rust, "Refusal"), None);
    assert!(rust_problem(rust, "check").is_some(), "a prefix is no name");
    assert!(rust_problem(rust, "in_a_comment").is_some(), "a comment defines nothing");
    assert!(rust_problem(rust, "Failure").is_some());
    assert!(rust_problem(rust, "Failure::apply").is_some(), "a method of a type the file lacks");
    assert!(rust_problem(rust, "WriteContext::prepare").is_some());
    assert!(rust_problem(rust, "check daily").is_some());
    let c = "static void test_lifecycle(void) {\n}\nint main(void) { test_lifecycle(); }\n";
    assert_eq!(c_problem(c, "test_lifecycle"), None);
    assert!(c_problem(c, "lifecycle").is_some());
    let js = "test('a sandbox lifecycle', () => {});\nit(\"reads\", () => {});\n";
    assert_eq!(js_problem(js, "a sandbox lifecycle"), None);
    assert_eq!(js_problem(js, "reads"), None);
    assert!(js_problem(js, "a sandbox").is_some());
    let (refs, errors) = references(
        "| `core/src/limits.rs::check_windows` | `wasm/tests/js/x.test.mjs::a test name` | \
         `core/src/limits::check` | `Engine::prepare` | `x.rs::` |",
    );
    assert_eq!(refs.len(), 2);
    assert_eq!(refs[1].name, "a test name");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        anchor("Keys: rotation, revocation, suspension; the operator plane's address"),
        "keys-rotation-revocation-suspension-the-operator-planes-address"
    );
    assert_eq!(anchor("The BOC/POP network cap"), "the-bocpop-network-cap");
}
