package ach;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The Java binding's test, without JUnit: a {@code main} that prints each
 * failure, a summary line {@code java binding: N passed, N failed}, and exits
 * non-zero on any failure.
 *
 * <ol>
 *   <li>the shared case corpus {@code tests/corpus/*.json} through {@link Validation}
 *       (as tests/c/corpus.c and corpus_lines.py check it: {@code valid},
 *       {@code message} and the {@code [field, code]} pairs, in order);
 *   <li>the hostile-input table {@code tests/hostile/*.json}, as the host {@code c}
 *       (ffi/tests/hostile.rs: an envelope into ach_engine_request with the body as a
 *       string member; the same two-partner fixture on a sandbox database file, each
 *       row judged as {@code ach_tests::hostile::check} judges it, nothing stored after
 *       any row, the counters unmoved after a reopen), plus envelope misuse only a
 *       binding can send; then the whole table again and again while the process's
 *       resident memory is watched: no leak, native or Java;
 *   <li>a sandbox lifecycle, in memory and in a database file (tests/c/test_ach.c's
 *       test_lifecycle, plus an idempotent replay), the file reopened; opening errors;
 *       closed engines;
 *   <li>16 threads sharing one engine, creating transactions at once; then readers
 *       while the engine is closed under them.
 * </ol>
 *
 * <p>Usage: {@code java --enable-native-access=ALL-UNNAMED -cp ... ach.BindingTest [REPO_ROOT]}
 * (libach found as {@link Native} says). Run it with a fixed heap ({@code -Xms} = {@code -Xmx}, and
 * {@code -XX:+AlwaysPreTouch}) as scripts/java-test does: the memory check watches VmRSS.
 * System properties: {@code ach.test.leakPasses} (default 3) measured passes of the table,
 * 0 to skip the memory check; {@code ach.test.mallocBoundMB} (default 16) and
 * {@code ach.test.rssBoundMB} (default 48) the growth allowed;
 * {@code ach.test.traceRss} prints the resident memory after each pass.
 */
@SuppressWarnings("restricted")
public final class BindingTest {
    static final String OPERATOR = "ok_java_test_operator_key_0123456789abcdef";
    static final String START = "2026-11-23T09:00:00-05:00";

    static int passed, failed;
    static Path root, tmp;

    interface Body {
        void run() throws Throwable;
    }

    static boolean check(boolean ok, String what) {
        if (ok) {
            passed++;
        } else {
            failed++;
            System.err.println("FAILED: " + what);
        }
        return ok;
    }

    static void section(String name, Body body) {
        System.out.println("\n== " + name);
        int f0 = failed, p0 = passed;
        long t0 = System.nanoTime();
        try {
            body.run();
        } catch (Throwable t) {
            failed++;
            System.err.println("FAILED: " + name + " threw " + t);
            t.printStackTrace();
        }
        System.out.printf("   %d passed, %d failed (%.1f s)%n", passed - p0, failed - f0, (System.nanoTime() - t0) / 1e9);
    }

    /** {@code body} throws an AchException of {@code type} with {@code result} and a detail holding {@code detail}. */
    static void expectThrows(Class<? extends AchException> type, AchResult result, String detail, Body body, String what) {
        try {
            body.run();
            check(false, what + ": no exception, expected " + result.cName());
        } catch (AchException e) {
            check(type.isInstance(e) && e.result() == result && e.resultName().equals(result.cName())
                    && e.code() == result.code() && e.detail().contains(detail) && e.getMessage().contains(e.resultName()),
                    what + ": " + e.getClass().getSimpleName() + " " + e.getMessage() + ", expected "
                            + type.getSimpleName() + " " + result.cName() + " with \"" + detail + "\"");
        } catch (Throwable e) {
            check(false, what + ": threw " + e);
        }
    }

    static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    static int countOf(String text, String needle) {
        int n = 0;
        for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length())) n++;
        return n;
    }

    static BigInteger integer(Object o) {
        if (o instanceof BigInteger b) return b;
        if (o instanceof Json.NumberText n) return new BigInteger(n.text());
        if (o instanceof Number n) return BigInteger.valueOf(n.longValue());
        return null;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        return (List<Object>) o;
    }

    static Object deepCopy(Object v) {
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> c = new LinkedHashMap<>();
            m.forEach((k, x) -> c.put((String) k, deepCopy(x)));
            return c;
        }
        if (v instanceof List<?> l) {
            List<Object> c = new ArrayList<>();
            l.forEach(x -> c.add(deepCopy(x)));
            return c;
        }
        return v;
    }

    /** Member names in code point order (serde_json's BTreeMap: UTF-8 byte order). */
    static final Comparator<String> CODE_POINTS = (x, y) -> {
        int i = 0, j = 0;
        while (i < x.length() && j < y.length()) {
            int a = x.codePointAt(i), b = y.codePointAt(j);
            if (a != b) return Integer.compare(a, b);
            i += Character.charCount(a);
            j += Character.charCount(b);
        }
        return Integer.compare(x.length() - i, y.length() - j);
    };

    /** serde_json's to_string of a Value: members sorted, compact, numbers as their literal text. */
    static String canonical(Object v) {
        StringBuilder b = new StringBuilder();
        canonical(b, v);
        return b.toString();
    }

    static void canonical(StringBuilder b, Object v) {
        if (v instanceof Map<?, ?> m) {
            TreeMap<String, Object> sorted = new TreeMap<>(CODE_POINTS);
            m.forEach((k, x) -> sorted.put((String) k, x));
            b.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> e : sorted.entrySet()) {
                if (!first) b.append(',');
                first = false;
                Json.writeString(b, e.getKey());
                b.append(':');
                canonical(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof List<?> l) {
            b.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) b.append(',');
                canonical(b, l.get(i));
            }
            b.append(']');
        } else {
            Json.write(b, v);
        }
    }

    // ======================================================================

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--library-probe")) {
            // A child JVM of section "loading libach": how the binding finds the library.
            try {
                System.out.println("version " + Engine.libraryVersion() + " from " + Engine.libraryPath());
                Validation.validateCustomer("{}");
                System.out.println("validated");
            } catch (AchLibraryException e) {
                System.out.println("AchLibraryException: " + e.getMessage());
                try {
                    Validation.validateCustomer("{}");
                } catch (AchLibraryException again) {
                    System.out.println("again: " + (again.getCause() == e.getCause() ? "same cause" : "other cause"));
                }
            }
            return;
        }
        root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        if (!Files.isDirectory(root.resolve("tests/corpus"))) {
            System.err.println("usage: BindingTest [REPO_ROOT] (no tests/corpus under " + root + ")");
            System.exit(2);
        }
        tmp = Files.createTempDirectory("ach-java-test-");
        System.out.println("libach " + Engine.libraryVersion() + " from " + Engine.libraryPath());
        section("loading libach: ach.library.path, ACH_LIBRARY, java.library.path, none", BindingTest::loading);
        section("the library: versions, result names, panics", BindingTest::basics);
        section("ach.Json", BindingTest::json);
        section("validation: calls, kinds, bytes, routing", BindingTest::validation);
        section("the shared case corpus (tests/corpus) through Validation", BindingTest::corpus);
        section("opening: options, files, keys", BindingTest::opening);
        section("envelopes, handles, closing", BindingTest::envelopes);
        section("lifecycle: sandbox in memory", () -> {
            try (Engine e = Engine.open(Engine.Options.inMemory().sandbox(true).operatorKey(OPERATOR).start(START))) {
                lifecycle(e, "memory");
            }
        });
        section("lifecycle: sandbox in a database file, reopened", BindingTest::fileLifecycle);
        section("16 threads sharing one engine", BindingTest::threads);
        section("the hostile-input table (tests/hostile), then memory over many passes", () -> new Hostile().run());
        try (Stream<Path> walk = Files.walk(tmp)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        System.out.printf("%njava binding: %d passed, %d failed%n", passed, failed);
        System.exit(failed == 0 ? 0 : 1);
    }

    // ======================================================================
    // The library

    /** Run this class with --library-probe in a child JVM; its output. */
    static String probe(Map<String, String> env, String... jvmArgs) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.addAll(List.of(jvmArgs));
        command.add(BindingTest.class.getName());
        command.add("--library-probe");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("ACH_LIBRARY");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        check(p.waitFor() == 0, "the probe exited " + p.exitValue() + ": " + out);
        return out;
    }

    static void loading() throws Exception {
        Path lib = Engine.libraryPath();
        Path empty = Files.createDirectories(tmp.resolve("no-lib"));
        String out = probe(Map.of(), "-Dach.library.path=" + lib);
        check(out.contains("version " + Engine.libraryVersion() + " from " + lib) && out.contains("validated"), "ach.library.path: " + out);
        out = probe(Map.of("ACH_LIBRARY", lib.toString()));
        check(out.contains("from " + lib) && out.contains("validated"), "ACH_LIBRARY: " + out);
        out = probe(Map.of(), "-Djava.library.path=" + empty + java.io.File.pathSeparator + lib.getParent());
        check(out.contains("from " + lib) && out.contains("validated"), "java.library.path: " + out);
        out = probe(Map.of("ACH_LIBRARY", lib.toString()), "-Dach.library.path=" + empty.resolve("libach.so"));
        check(out.contains("AchLibraryException: libach not found: the system property ach.library.path names "
                + empty.resolve("libach.so") + ", which is not a file") && out.contains("again: same cause"),
                "the property wins, and names what is missing: " + out);
        out = probe(Map.of("ACH_LIBRARY", "/nonexistent/libach.so"));
        check(out.contains("the environment variable ACH_LIBRARY names /nonexistent/libach.so"), "ACH_LIBRARY missing: " + out);
        out = probe(Map.of(), "-Djava.library.path=" + empty);
        check(out.contains("libach not found: no libach.so in java.library.path [" + empty + "]")
                && out.contains("ach.library.path") && out.contains("ACH_LIBRARY") && out.contains("cargo build -p ach-ffi"),
                "nothing found: " + out);
        Path notLib = Files.writeString(tmp.resolve("libach-not.so"), "not a library");
        out = probe(Map.of(), "-Dach.library.path=" + notLib);
        check(out.contains("AchLibraryException: cannot load libach from " + notLib), "not a library: " + out);
    }

    static void basics() {
        String v = Engine.libraryVersion();
        check(v.matches("\\d+\\.\\d+\\.\\d+") && v.startsWith(Native.MAJOR + "."), "ach_version " + v);
        String[] names = {"ACH_OK", "ACH_INVALID_ARGUMENT", "ACH_NULL_POINTER", "ACH_INVALID_UTF8", "ACH_INVALID_JSON",
            "ACH_STORAGE", "ACH_CLOSED", "ACH_PANIC", "ACH_WRONG_KEY", "ACH_UNKNOWN_HANDLE", "ACH_KEY_FILE"};
        for (int i = 0; i < names.length; i++) {
            check(Native.resultName(i).equals(names[i]) && AchResult.of(i).cName().equals(names[i])
                    && AchResult.of(i).code() == i, "result " + i + " is " + names[i]);
        }
        check(Native.resultName(11).equals("ACH_UNKNOWN_RESULT") && AchResult.of(11) == AchResult.UNKNOWN, "result 11");
        check(Native.resultName(-1).equals("ACH_UNKNOWN_RESULT") && AchResult.of(-1) == AchResult.UNKNOWN, "UINT32_MAX");
        expectThrows(AchPanicException.class, AchResult.PANIC, "panic: ach_test_panic was called", Native::testPanic,
                "ach_test_panic");
        // The detail is per thread, and a success clears it.
        Validation.validateCustomer("{}");
        check(Native.lastError().isEmpty(), "a success clears the last error");
        // Every AchResult failure maps to its exception class.
        check(AchException.of(6, "ACH_CLOSED", "x") instanceof AchClosedException
                && AchException.of(9, "ACH_UNKNOWN_HANDLE", "x") instanceof AchClosedException
                && AchException.of(3, "ACH_INVALID_UTF8", "x") instanceof AchArgumentException
                && AchException.of(8, "ACH_WRONG_KEY", "x") instanceof AchStorageException
                && AchException.of(10, "ACH_KEY_FILE", "x") instanceof AchStorageException
                && AchException.of(42, "ACH_UNKNOWN_RESULT", "x").getClass() == AchException.class,
                "exception classes by result");
    }

    static void json() {
        Object v = Json.parse("{\"total\":88.20,\"count\":12,\"big\":123456789012345678901234567890,\"e\":1E2,"
                + "\"s\":\"a\\u0000\\\"\\\\\\n\\ud83d\\ude00é\",\"t\":true,\"n\":null,\"l\":[1,[],{}]}");
        Map<String, Object> m = map(v);
        check(m.get("total") instanceof BigDecimal d && d.equals(new BigDecimal("88.20")) && d.scale() == 2, "88.20 keeps its scale");
        check(BigInteger.valueOf(12).equals(m.get("count")), "an integer is a BigInteger");
        check(new BigInteger("123456789012345678901234567890").equals(m.get("big")), "a big integer");
        check(new BigDecimal("1E2").equals(m.get("e")), "an exponent is a BigDecimal");
        check("a\u0000\"\\\n\uD83D\uDE00é".equals(m.get("s")), "escapes");
        check(Boolean.TRUE.equals(m.get("t")) && m.containsKey("n") && m.get("n") == null, "true, null");
        check(List.of(BigInteger.ONE, List.of(), Map.of()).equals(m.get("l")), "arrays");
        check(String.join(",", m.keySet()).equals("total,count,big,e,s,t,n,l"), "members in document order");
        check(Json.parse(Json.write(m)).equals(m), "write then parse");
        check(Json.write(obj("amount", new BigDecimal("125.50"), "n", 7L, "x", List.of("\u0001\u2028"))).equals(
                "{\"amount\":125.50,\"n\":7,\"x\":[\"\\u0001\u2028\"]}"), "write: " + Json.write(obj("amount", new BigDecimal("125.50"))));
        check(Json.write("\uD800x").equals("\"\\ud800x\""), "a lone surrogate is escaped");
        check(Json.parseExact("[-0,1E2,1200.000]").equals(List.of(new Json.NumberText("-0"), new Json.NumberText("1E2"),
                new Json.NumberText("1200.000"))), "parseExact keeps literals");
        check(Json.write(List.of(new Json.NumberText("-0e0"))).equals("[-0e0]"), "NumberText written verbatim");
        check(Json.parse("{\"a\":1,\"a\":2}").equals(Map.of("a", BigInteger.TWO)), "a repeated member keeps the last");
        String deep = "[".repeat(200_000) + "]".repeat(200_000);
        Object d = Json.parse(deep);
        check(d instanceof List<?>, "200,000 nested arrays parse without recursion");
        for (String bad : new String[] {"", " ", "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", "+1", "\"\u0001\"", "\"abc",
            "[1 2]", "{\"a\" 1}", "nul", "truex", "[] []", "\"\\x\"", "\"\\u12\"", "{1:2}", ".5", "[", "{"}) {
            try {
                Json.parse(bad);
                check(false, "Json.parse accepted " + bad);
            } catch (Json.ParseException e) {
                passed++;
            }
        }
        try {
            Json.parse("1e99999999999");
            check(false, "an exponent beyond BigDecimal");
        } catch (Json.ParseException e) {
            check(e.getMessage().contains("parseExact"), e.getMessage());
        }
        for (Object bad : new Object[] {1.5, 2.5f, new Object(), Map.of(1, 2)}) {
            try {
                Json.write(List.of(bad));
                check(false, "Json.write accepted " + bad);
            } catch (IllegalArgumentException e) {
                passed++;
            }
        }
        List<Object> cycle = new ArrayList<>();
        cycle.add(cycle);
        try {
            Json.write(cycle);
            check(false, "a cycle was written");
        } catch (IllegalArgumentException e) {
            check(e.getMessage().contains("cycle"), e.getMessage());
        }
        for (String bad : new String[] {"1.", "", "-", "01", "1e", " 1", "1 ", "0x1", "NaN"}) {
            try {
                new Json.NumberText(bad);
                check(false, "NumberText(\"" + bad + "\")");
            } catch (IllegalArgumentException e) {
                passed++;
            }
        }
    }

    static final String VALID_TRANSACTION =
            "{\"partner_id\":\"par_0123456789abcdefghijKL\",\"merchant_id\":\"mer_0123456789abcdefghijKL\","
            + "\"amount\":\"125.50\",\"description\":\"Invoice 42\",\"type\":\"debit\",\"standard_entry_class\":\"PPD\","
            + "\"customer\":{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\",\"account_number\":\"123456789\","
            + "\"account_type\":\"checking\"}}";

    static void validation() {
        Validation.Result r = Validation.validateTransaction(VALID_TRANSACTION);
        check(r.valid() && r.message() == null && r.errors().isEmpty()
                && r.json().equals("{\"valid\":true,\"message\":null,\"errors\":[]}"), "valid: " + r);
        check(Validation.verdictLine("transaction", VALID_TRANSACTION).endsWith("}\n"), "verdictLine");
        r = Validation.validateTransaction(obj("merchant_id", "mer_1", "amount", "1.234"));
        check(!r.valid() && r.message() != null && r.errors().stream().anyMatch(p -> p.field().equals("amount"))
                && r.json().startsWith("{\"valid\":false,\"message\":"), "refused: " + r);
        r = Validation.validateMerchant("{not json");
        check(!r.valid() && r.errors().get(0).code().equals("invalid_json"), "not JSON is a verdict: " + r);
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "payment",
                () -> Validation.validate("payment", "{}"), "unknown kind");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "routing",
                () -> Validation.validate("routing", "{}"), "no routing kind");
        try {
            Validation.validate("transaction\0", "{}");
            check(false, "a kind with a NUL");
        } catch (IllegalArgumentException e) {
            passed++;
        }
        // A NUL inside the text goes through ach_validate_bytes: judged, not cut.
        r = Validation.validateCustomer("{\"a\":\u0000}");
        check(!r.valid() && r.errors().get(0).code().equals("invalid_json"), "NUL inside: " + r);
        r = Validation.validateBytes("customer", new byte[] {'{', '"', 'n', '"', ':', '"', (byte) 0xff, '"', '}'});
        check(!r.valid() && r.json().contains("UTF-8"), "invalid UTF-8 bytes: " + r);
        r = Validation.validateCustomer("{\"name\":\"\uD800\"}");
        check(!r.valid() && r.json().contains("UTF-8"), "a lone surrogate is not UTF-8: " + r);
        r = Validation.validateBytes("customer", new byte[0]);
        check(!r.valid(), "empty body");
        check(Validation.validate("transaction", VALID_TRANSACTION.replace("Invoice", "Invoicé")).valid(), "non-ASCII text");
        String emoji = VALID_TRANSACTION.replace("Ada", "Ada \uD83D\uDE00");
        r = Validation.validate("transaction", emoji);
        check(!r.valid() && r.errors().get(0).code().equals("unsupported_characters")
                && r.json().equals(Validation.validateBytes("transaction", emoji.getBytes(StandardCharsets.UTF_8)).json()),
                "a character NACHA cannot carry, as text and as bytes: " + r);
        // Routing numbers: derived from the customer rules (libach has no routing kind).
        check(Validation.validateRouting("021000021").valid(), "routing 021000021");
        r = Validation.validateRouting("021000022");
        check(!r.valid() && r.errors().size() == 1 && r.errors().get(0).code().equals("invalid_check_digit")
                && r.message().equals("'021000022' is an invalid Routing Number"), "bad check digit: " + r);
        r = Validation.validateRouting("123456780");
        check(!r.valid() && r.errors().get(0).code().equals("not_found"), "not in the directory: " + r);
        r = Validation.validateRouting("12ab");
        check(!r.valid() && r.errors().get(0).field().equals("routing_number"), "not digits: " + r);
    }

    // ======================================================================
    // 1. The corpus

    static void corpus() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(root.resolve("tests/corpus"))) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        int cases = 0, ok = 0;
        for (Path f : files) {
            for (Object o : list(Json.parseExact(Files.readString(f)))) {
                Map<String, Object> c = map(o);
                cases++;
                String kind = (String) c.get("kind");
                String name = kind + " / " + c.get("name");
                String body = c.get("raw") instanceof String raw ? raw : c.get("request") != null ? canonical(c.get("request")) : "";
                Validation.Result r = Validation.validate(kind, body);
                Validation.Result bytes = Validation.validateBytes(kind, body.getBytes(StandardCharsets.UTF_8));
                check(r.json().equals(bytes.json()), name + ": ach_validate and ach_validate_bytes differ");
                List<List<String>> got = r.errors().stream().map(p -> List.of(p.field(), p.code())).toList();
                List<List<String>> want = list(c.get("fields")).stream().map(p -> list(p).stream().map(String.class::cast).toList()).toList();
                boolean same = Objects.equals(c.get("valid"), r.valid()) && Objects.equals(c.get("message"), r.message()) && got.equals(want);
                if (check(same, name + ": got (" + r.valid() + ", " + r.message() + ", " + got + "); expected ("
                        + c.get("valid") + ", " + c.get("message") + ", " + want + ")")) {
                    ok++;
                }
            }
        }
        check(cases >= 100, "the corpus has " + cases + " cases");
        System.out.println("   corpus through Java: " + ok + " of " + cases + " cases as expected");
    }

    // ======================================================================
    // 3. Opening, envelopes, the lifecycle

    static final String KEY_A = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    static final String KEY_B = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    static void opening() throws IOException {
        expectThrows(AchArgumentException.class, AchResult.INVALID_JSON, "", () -> Engine.openJson("{"), "options {");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "bogus_member",
                () -> Engine.open(obj("sandbox", true, "bogus_member", 1)), "unknown option");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "", () -> Engine.openJson("[]"), "options []");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "", () -> Engine.open(obj("sandbox", "yes")), "sandbox yes");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "encryption_key",
                () -> Engine.open(Engine.Options.inMemory().encryptionKey("not hex")), "encryption key");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "",
                () -> Engine.open(Engine.Options.inMemory().sandbox(true).start("tomorrow")), "start tomorrow");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "",
                () -> Engine.open(Engine.Options.inMemory().start("2026-11-23T09:00:00Z")), "start without sandbox");
        expectThrows(AchStorageException.class, AchResult.STORAGE, "",
                () -> Engine.open(Engine.Options.file(tmp.resolve("no/such/dir/x.redb")).encryptionKey(KEY_A)), "missing directory");
        // Every default: in memory, the system clock, no operator.
        try (Engine e = Engine.open(Engine.Options.inMemory())) {
            check(e.request("POST", "/admin/partners", OPERATOR, obj("name", "x")).status() == 401, "no operator key: 401");
        }
        // Sandbox starts given as an OffsetDateTime and as an Instant.
        try (Engine e = Engine.open(Engine.Options.inMemory().sandbox(true).operatorKey(OPERATOR)
                .start(java.time.OffsetDateTime.parse(START)))) {
            Response r = e.request("POST", "/admin/clock", OPERATOR, obj("now", "2026-11-23T08:00:00-05:00"));
            check(r.status() == 422, "an OffsetDateTime start: the clock never goes back: " + r.raw());
        }
        try (Engine e = Engine.open(Engine.Options.inMemory().sandbox(true).operatorKey(OPERATOR)
                .start(java.time.Instant.parse("2026-11-23T14:00:00Z")))) {
            check(e.request("POST", "/admin/clock", OPERATOR, obj("now", "2026-11-23T10:00:00-05:00")).status() == 200,
                    "an Instant start");
        }

        // A file: created with its key file; twice at once refused; reopened; another key; a bad key file.
        Path db = tmp.resolve("open-test.redb");
        Path key = tmp.resolve("open-test.redb.key");
        String partnerKey, partnerId;
        try (Engine e = Engine.open(Engine.Options.file(db).operatorKey(OPERATOR))) {
            check(Files.isReadable(key), "the key file exists");
            Response r = e.request("POST", "/admin/partners", OPERATOR, obj("name", "Kept"));
            check(r.status() == 201, "partner in a file");
            partnerKey = r.string("payload", "api_key");
            partnerId = r.string("payload", "partner_id");
            expectThrows(AchStorageException.class, AchResult.STORAGE, "",
                    () -> Engine.open(Engine.Options.file(db).operatorKey(OPERATOR)), "the same file twice");
            check(e.request("GET", "/categories", partnerKey, null).status() == 200, "the first engine is unharmed");
        }
        try (Engine e = Engine.open(Engine.Options.file(db).operatorKey(OPERATOR))) {
            Response r = e.request(Request.get("/status-changes/0").query(Map.of("partner_id", partnerId)).apiKey(partnerKey));
            check(r.status() == 200, "reopened: the partner's key still works (query as a Map): " + r.raw());
        }
        expectThrows(AchStorageException.class, AchResult.WRONG_KEY, "",
                () -> Engine.open(Engine.Options.file(db).encryptionKey(KEY_B)), "another key");
        Files.writeString(key, "this is not a key\n");
        expectThrows(AchStorageException.class, AchResult.KEY_FILE, ".key", () -> Engine.open(Engine.Options.file(db)), "a bad key file");
    }

    static void envelopes() {
        Engine e = Engine.open(Engine.Options.inMemory().sandbox(true).operatorKey(OPERATOR).start(START));
        byte[] get = "{\"method\":\"GET\",\"path\":\"/categories\"}".getBytes(StandardCharsets.UTF_8);
        expectThrows(AchArgumentException.class, AchResult.INVALID_JSON, "request_json",
                () -> e.requestEnvelope("{not json".getBytes(StandardCharsets.UTF_8)), "envelope not JSON");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "path",
                () -> e.requestEnvelope("{\"method\":\"GET\"}".getBytes(StandardCharsets.UTF_8)), "envelope without path");
        expectThrows(AchArgumentException.class, AchResult.INVALID_ARGUMENT, "",
                () -> e.requestEnvelope("{\"method\":\"GET\",\"path\":\"/\",\"header\":1}".getBytes(StandardCharsets.UTF_8)),
                "envelope with another member");
        expectThrows(AchArgumentException.class, AchResult.INVALID_UTF8, "UTF-8",
                () -> e.requestEnvelope(new byte[] {'{', '"', 'm', '"', ':', (byte) 0xc3, '}'}), "envelope not UTF-8");
        Response r = e.requestEnvelope(get);
        check(r.raw().equals("{\"body\":{\"message\":\"Authentication failed.\",\"success\":false},\"status\":401}")
                && r.status() == 401 && r.bodyText().equals("{\"message\":\"Authentication failed.\",\"success\":false}")
                && r.headers().isEmpty() && !r.replayed(), "no key: exactly 401: " + r.raw());
        check(e.request("GET", "/nowhere", OPERATOR, null).status() == 404, "404 is data");
        check(e.request("GET", "/openapi.json", null, null).status() == 200, "openapi.json");
        check(!e.isClosed() && e.toString().equals("Engine[in memory]"), e.toString());
        e.close();
        check(e.isClosed() && e.toString().endsWith("closed]"), "isClosed");
        expectThrows(AchClosedException.class, AchResult.CLOSED, "closed", () -> e.requestEnvelope(get), "request after close");
        expectThrows(AchClosedException.class, AchResult.CLOSED, "closed",
                () -> e.request("GET", "/categories", null, null), "request after close (public call)");
        e.close(); // twice: harmless
        expectThrows(AchClosedException.class, AchResult.CLOSED, "closed", () -> e.requestEnvelope(get), "still closed");
        try {
            new Request("GET", "/x", 12, null, null, null);
            check(false, "a query of another type");
        } catch (IllegalArgumentException x) {
            passed++;
        }
    }

    /** A partner (after another one), and its approved merchant for PPD and WEB: {partnerId, partnerKey, merchantId, merchantKey}. */
    static String[] partnerMerchant(Engine e, String operator, List<String> classes) throws IOException {
        check(e.request("POST", "/admin/partners", operator, obj("name", "Other Payments")).status() == 201, "other partner");
        Response p = e.request("POST", "/admin/partners", operator, obj("name", "Acme Payments"));
        check(p.status() == 201, "partner: " + p.raw());
        String partnerId = p.string("payload", "partner_id"), partnerKey = p.string("payload", "api_key");
        Response m = e.request("POST", "/merchants", partnerKey, application(partnerId, classes, false));
        check(m.status() == 201, "merchant application: " + m.raw());
        String merchantId = m.string("id");
        Response a = e.request("POST", "/admin/merchants/" + merchantId + "/approve", operator,
                obj("limits", obj("max_transaction_amount", "10000.00")));
        check(a.status() == 200, "approval: " + a.raw());
        return new String[] {partnerId, partnerKey, merchantId, a.string("payload", "api_key")};
    }

    /** examples/requests/merchant.json for this partner and these classes. */
    static Map<String, Object> application(String partnerId, List<String> classes, boolean declineDuplicates) throws IOException {
        Map<String, Object> app = map(Json.parseExact(Files.readString(root.resolve("examples/requests/merchant.json"))));
        app.put("partner_id", partnerId);
        app.put("standard_entry_classes", classes);
        map(app.get("velocities")).put("decline_duplicates", declineDuplicates);
        return app;
    }

    static final Map<String, Object> INLINE = obj("name", "Ada Lovelace", "routing_number", "021000021",
            "account_number", "987654321", "account_type", "checking");

    static Map<String, Object> transaction(String[] t, String type, String amount, Object customer) {
        return obj("partner_id", t[0], "merchant_id", t[2], "amount", amount, "description", "Java test", "type", type,
                "standard_entry_class", "PPD", "customer", customer);
    }

    static Response expect(Engine e, int status, Request r, String what) {
        Response a = e.request(r);
        check(a.status() == status, what + ": " + a.status() + ", expected " + status + ": " + abbreviate(a.raw()));
        return a;
    }

    static String abbreviate(String s) {
        return s.length() <= 400 ? s : s.substring(0, 400) + "...";
    }

    /** test_ach.c's test_lifecycle, plus an idempotent replay; answers the ids a reopen checks. */
    static Map<String, String> lifecycle(Engine e, String label) throws IOException {
        String[] t = partnerMerchant(e, OPERATOR, List.of("PPD", "WEB"));
        String key = t[1];
        Map<String, String> query = Map.of("partner_id", t[0]);
        String q = "partner_id=" + t[0];

        // A stored customer; a transaction through its token.
        Response c = expect(e, 201, Request.post("/customers").apiKey(key).body(obj("partner_id", t[0], "merchant_id", t[2],
                "name", "Grace Hopper", "routing_number", "026009593", "account_number", "12345678", "account_type", "savings")),
                label + " customer");
        String customer = c.string("payload", "id");
        check(customer != null && customer.startsWith("cus_"), "customer id " + customer);
        Map<String, Object> token = obj("id", customer);

        String voided = expect(e, 201, Request.post("/transactions").apiKey(key).body(transaction(t, "debit", "10.00", INLINE)),
                "debit inline").string("payload", "id");
        String returned = expect(e, 201, Request.post("/transactions").apiKey(key).body(transaction(t, "debit", "20.00", token)),
                "debit by token").string("payload", "id");
        String settled = expect(e, 201, Request.post("/transactions").apiKey(key).body(transaction(t, "debit", "30.00", INLINE)),
                "debit inline 2").string("payload", "id");
        check(settled != null && settled.startsWith("txn_"), "transaction id " + settled);

        // An idempotent request made again: the stored answer, marked as a replay.
        Request idem = Request.post("/transactions").apiKey(key).idempotencyKey("java-order-1")
                .body(transaction(t, "credit", "5.00", INLINE));
        Response first = expect(e, 201, idem, "idempotent create");
        Response again = expect(e, 201, idem, "idempotent replay");
        check(!first.replayed() && again.replayed() && "true".equals(again.headers().get("Idempotent-Replayed"))
                && again.bodyText().equals(first.bodyText()), "replay header: " + again.raw());
        String credit = first.string("payload", "id");
        Response voidCredit = expect(e, 200, Request.put("/transactions/" + credit + "/void").query(q).apiKey(key), "void the credit");
        check(voidCredit.bodyText().contains("\"status\":\"voided\""), voidCredit.raw());

        // A refusal is an answer: over the merchant's limit (message 21, HTTP 403).
        Response refused = expect(e, 403, Request.post("/transactions").apiKey(key).body(transaction(t, "debit", "20000.00", INLINE)),
                "over the limit");
        check(BigInteger.valueOf(21).equals(refused.at("error_code")) && Boolean.FALSE.equals(refused.at("success"))
                && "over_limit".equals(refused.string("errors", 0, "code")), "refusal as data: " + refused.raw());
        Response bad = expect(e, 422, Request.post("/transactions").apiKey(key).body(transaction(t, "debit", "1.234", INLINE)),
                "an invalid amount");
        check("amount".equals(bad.string("errors", 0, "field")), bad.raw());
        expect(e, 401, Request.post("/transactions").apiKey("pk_not_a_key").body(transaction(t, "debit", "1.00", INLINE)), "a bad key");

        // Void while pending.
        Response v = expect(e, 200, Request.put("/transactions/" + voided + "/void").query(q).apiKey(key), "void");
        check(v.bodyText().contains("\"status\":\"voided\""), "voided: " + v.raw());
        expect(e, 200, Request.delete("/customers/" + customer).query(query).apiKey(key), "delete the customer");

        // Past the 6 PM ET cut-off: the two live debits originate.
        Response clock = expect(e, 200, Request.post("/admin/clock").apiKey(OPERATOR).body(obj("now", "2026-11-23T18:30:00-05:00")), "cut-off");
        check(BigInteger.TWO.equals(clock.at("payload", "originated")), "originated 2: " + clock.raw());
        expect(e, 409, Request.put("/transactions/" + settled + "/void").query(q).apiKey(key), "void after origination");
        expect(e, 200, Request.post("/admin/returns").apiKey(OPERATOR).body(obj("transaction_id", returned, "return_code", "R01")), "return R01");
        clock = expect(e, 200, Request.post("/admin/clock").apiKey(OPERATOR).body(obj("now", "2026-12-01T09:00:00-05:00")), "settlement");
        check(BigInteger.ONE.equals(clock.at("payload", "settled")), "settled 1: " + clock.raw());
        expect(e, 422, Request.post("/admin/clock").apiKey(OPERATOR).body(obj("now", "2026-11-01T00:00:00Z")), "the clock never goes back");
        Response rev = expect(e, 200, Request.put("/transactions/" + settled + "/reverse").query(q).apiKey(key), "reverse");
        String reversal = rev.string("payload", "reversal_id");
        check(reversal != null && reversal.startsWith("txn_") && !reversal.equals(settled), "reversal " + rev.raw());

        // The partner's status-changes feed: every change, in order.
        Response feed = expect(e, 200, Request.get("/status-changes/0").query(q).apiKey(key), "status changes");
        String f = feed.bodyText();
        List<Object> changes = list(feed.at("payload", "changes"));
        long count = changes.stream().filter(x -> "A".equals(map(x).get("status"))).count();
        check("true".equals(feed.at("success")) && count == 5 && countOf(f, "\"status\":\"B\"") == 2
                && countOf(f, "\"status\":\"S\"") == 1 && countOf(f, "\"status\":\"R\"") == 3
                && countOf(f, "\"return_code\":\"R01\"") == 1 && countOf(f, "\"reason\":\"Voided\"") == 2
                && f.contains(reversal), "the feed: " + abbreviate(f));
        String pointer = feed.string("payload", "new_pointer");
        Response empty = expect(e, 200, Request.get("/status-changes/" + pointer).query(q).apiKey(key), "feed from its pointer");
        check(list(empty.at("payload", "changes")).isEmpty(), "no more changes: " + empty.raw());

        // The merchant's events feed: the same changes, then nothing more.
        Response events = expect(e, 200, Request.get("/events").apiKey(t[3]), "events");
        check(countOf(events.bodyText(), "\"type\":\"transaction.status_changed\"") == 11
                && Boolean.FALSE.equals(events.at("exists_more_events")), "events: " + abbreviate(events.raw()));
        Response none = expect(e, 200, Request.get("/events/" + events.string("new_pointer")).apiKey(t[3]), "events from the pointer");
        check(list(none.at("events")).isEmpty(), "no more events");

        // One read back: its history, the account cut to its last four digits.
        Response read = expect(e, 200, Request.get("/transactions/" + returned).query(q).apiKey(key), "read back");
        String text = read.bodyText();
        check(Boolean.TRUE.equals(read.at("success")) && text.contains("\"account_number_last4\":\"5678\"")
                && !text.contains("12345678") && text.contains("\"return\":{\"code\":\"R01\"")
                && countOf(text, "\"change_timestamp\"") == 3, "read: " + abbreviate(text));
        // A page of two by the merchant's key, then the rest by its cursor.
        Response page = expect(e, 200, Request.get("/transactions").query("limit=2").apiKey(t[3]), "list");
        check(countOf(page.bodyText(), "\"standard_entry_class\"") == 2 && page.bodyText().contains(reversal), "page 1");
        String cursor = (String) findMember(page.body(), "next_cursor");
        Response rest = expect(e, 200, Request.get("/transactions").query("limit=100&after=" + cursor).apiKey(t[3]), "list the rest");
        check(countOf(rest.bodyText(), "\"standard_entry_class\"") == 3 && rest.bodyText().contains("\"next_cursor\":null"),
                "page 2: " + abbreviate(rest.raw()));
        return Map.of("partner_id", t[0], "partner_key", key, "returned", returned, "reversal", reversal, "pointer", pointer);
    }

    /** The first member of this name anywhere in a JSON value. */
    static Object findMember(Object v, String name) {
        if (v instanceof Map<?, ?> m) {
            if (m.containsKey(name)) return m.get(name);
            for (Object x : m.values()) {
                Object found = findMember(x, name);
                if (found != null) return found;
            }
        } else if (v instanceof List<?> l) {
            for (Object x : l) {
                Object found = findMember(x, name);
                if (found != null) return found;
            }
        }
        return null;
    }

    static void fileLifecycle() throws IOException {
        Path db = tmp.resolve("lifecycle.redb");
        Engine.Options options = Engine.Options.file(db).sandbox(true).operatorKey(OPERATOR).start(START).encryptionKey(KEY_A);
        Map<String, String> ids;
        Engine e = Engine.open(options);
        try {
            ids = lifecycle(e, "file");
        } finally {
            e.close();
        }
        check(!Files.exists(tmp.resolve("lifecycle.redb.key")), "an encryption key given: no key file");
        expectThrows(AchClosedException.class, AchResult.CLOSED, "closed",
                () -> e.request("GET", "/categories", ids.get("partner_key"), null), "closed engine");
        e.close();
        try (Engine reopened = Engine.open(options)) {
            String q = "partner_id=" + ids.get("partner_id");
            Response read = expect(reopened, 200, Request.get("/transactions/" + ids.get("returned")).query(q)
                    .apiKey(ids.get("partner_key")), "reopened: read back");
            check(read.bodyText().contains("\"return\":{\"code\":\"R01\""), "reopened keeps the return");
            Response feed = expect(reopened, 200, Request.get("/status-changes/" + ids.get("pointer")).query(q)
                    .apiKey(ids.get("partner_key")), "reopened: the feed from its pointer");
            check(list(feed.at("payload", "changes")).isEmpty(), "reopened: nothing new in the feed");
            // The sandbox clock resumed where it stood: it cannot go back before 2026-12-01.
            expect(reopened, 422, Request.post("/admin/clock").apiKey(OPERATOR).body(obj("now", "2026-11-30T09:00:00-05:00")),
                    "reopened: the clock resumed");
        }
    }

    // ======================================================================
    // 4. Threads

    static void threads() throws Exception {
        final int threads = 16, writes = 12;
        Engine e = Engine.open(Engine.Options.inMemory().sandbox(true).operatorKey(OPERATOR).start(START));
        String[] t = partnerMerchant(e, OPERATOR, List.of("PPD", "WEB"));
        Set<String> ids = ConcurrentHashMap.newKeySet();
        AtomicInteger created = new AtomicInteger(), other = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int index = i;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    for (int k = 0; k < writes; k++) {
                        String amount = String.format(Locale.ROOT, "%d.%02d", index + 1, k + 1);
                        Response r = e.request("POST", "/transactions", t[1], transaction(t, "debit", amount, INLINE));
                        if (r.status() == 201) {
                            created.incrementAndGet();
                            ids.add(r.string("payload", "id"));
                        } else {
                            other.incrementAndGet();
                            System.err.println("thread " + index + ": " + r.raw());
                        }
                    }
                } catch (Throwable x) {
                    other.incrementAndGet();
                    x.printStackTrace();
                }
            }));
        }
        go.countDown();
        for (Thread w : workers) w.join();
        check(created.get() == threads * writes && other.get() == 0, created + " of " + threads * writes + " creates acknowledged");
        check(ids.size() == threads * writes, ids.size() + " distinct ids");
        Response feed = e.request(Request.get("/status-changes/0").query("partner_id=" + t[0]).apiKey(t[1]));
        List<Object> changes = list(feed.at("payload", "changes"));
        Set<Object> fed = new HashSet<>();
        for (Object c : changes) fed.add(map(c).get("transaction_id"));
        check(changes.size() == threads * writes && fed.equals(ids), "the feed holds " + changes.size() + " changes for exactly the ids answered");
        // Read back through the merchant's list, page by page.
        Set<Object> listed = new HashSet<>();
        String cursor = null;
        for (int page = 0; page < 100; page++) {
            Response r = e.request(Request.get("/transactions").query(cursor == null ? "limit=50" : "limit=50&after=" + cursor).apiKey(t[3]));
            check(r.status() == 200, "list page " + page + ": " + abbreviate(r.raw()));
            List<Object> items = list(findMember(r.body(), "transactions"));
            for (Object x : items) listed.add(map(x).get("id"));
            cursor = (String) findMember(r.body(), "next_cursor");
            if (cursor == null) break;
        }
        check(listed.equals(ids), "the merchant's list holds exactly the " + listed.size() + " transactions answered");

        // Readers while the engine is closed under them: each call answers normally or throws
        // AchClosedException, and once closed the engine stays closed.
        AtomicInteger ok = new AtomicInteger(), closed = new AtomicInteger(), wrong = new AtomicInteger();
        CountDownLatch first = new CountDownLatch(threads);
        List<Thread> readers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            readers.add(Thread.ofPlatform().start(() -> {
                int mine = 0;
                for (int k = 0; k < 100_000 && mine < 3; k++) {
                    try {
                        Response r = e.request(Request.get("/status-changes/0").query("partner_id=" + t[0]).apiKey(t[1]));
                        if (r.status() == 200 && mine == 0) ok.incrementAndGet();
                        else wrong.incrementAndGet();
                    } catch (AchClosedException x) {
                        mine++;
                        closed.incrementAndGet();
                    } catch (Throwable x) {
                        wrong.incrementAndGet();
                    }
                    if (k == 0) first.countDown();
                }
            }));
        }
        first.await();
        e.close();
        for (Thread r : readers) r.join();
        check(ok.get() >= threads && closed.get() == 3 * threads && wrong.get() == 0,
                "readers: " + ok + " answered, " + closed + " closed, " + wrong + " wrong");
        e.close();
    }

    // ======================================================================
    // 2. The hostile-input table

    static final class Tenant {
        String id, key, query, merchant, merchantKey, second, customer, pending, last, earlyPointer, pointer, events;
    }

    record Case(String name, String file, String method, String path, String key, String idempotencyKey, String body,
            String likeUnknown, Map<String, Object> expect) {}

    /** One row: a corpus case, or an envelope only a binding sends (result code and detail expected). */
    record Row(String name, Case c, byte[] envelope, AchResult result, String detail) {}

    static final class Hostile {
        static final String OPERATOR = "ok_java_hostile_operator_key_0123456789";
        static final String START = "2026-11-23T10:00:00-05:00";
        final Path dir = tmp.resolve("hostile");
        final Path hostileDir = root.resolve("tests/hostile");
        Engine engine;
        Tenant a, b;
        final Map<String, String> values = new LinkedHashMap<>();
        Map<String, Object> bases, catalogue;
        long calls, answerBytes, envelopeBytes, errorEnvelopeBytes, detailBytes;
        final SecureRandom random = new SecureRandom();

        Engine.Options options() {
            return Engine.Options.file(dir.resolve("hostile.redb")).operatorKey(OPERATOR).sandbox(true).start(START);
        }

        Response call(Request r) {
            byte[] e = r.envelope().getBytes(StandardCharsets.UTF_8);
            return callEnvelope(e);
        }

        Response callEnvelope(byte[] e) {
            calls++;
            envelopeBytes += e.length;
            Response a = engine.requestEnvelope(e);
            answerBytes += a.raw().length() + 1;
            return a;
        }

        Map<String, Object> ok(int status, Request r) {
            Response a = call(r);
            if (a.status() != status) throw new IllegalStateException("set-up: " + r.method() + " " + r.path() + " answered " + a.raw());
            return map(a.body());
        }

        Response debit(Tenant t, String merchant, String amount) {
            return call(Request.post("/transactions").apiKey(t.key).body(obj("partner_id", t.id, "merchant_id", merchant,
                    "amount", amount, "description", "java hostile", "type", "debit", "standard_entry_class", "PPD",
                    "customer", obj("name", "Ada Lovelace", "routing_number", "021000021", "account_number", "987654321",
                            "account_type", "checking"))));
        }

        String pointerNow(Tenant t) {
            return (String) Json.at(ok(200, Request.get("/status-changes/0").query(t.query).apiKey(t.key)), "payload", "new_pointer");
        }

        String[] merchant(Tenant t, List<String> classes) throws IOException {
            Map<String, Object> m = ok(201, Request.post("/merchants").apiKey(t.key).body(application(t.id, classes, false)));
            String id = (String) m.get("id");
            String big = "99999999.99";
            BigInteger lots = BigInteger.valueOf(1_000_000_000L);
            Map<String, Object> roomy = obj("limits", obj("max_transaction_amount", big, "min_transaction_amount", "0.01",
                    "daily_count", lots, "daily_amount", big, "period_count", lots, "period_amount", big, "monthly_count", lots,
                    "monthly_amount", big, "monthly_average_amount", big));
            Map<String, Object> approved = ok(200, Request.post("/admin/merchants/" + id + "/approve").apiKey(OPERATOR).body(roomy));
            return new String[] {id, (String) Json.at(approved, "payload", "api_key")};
        }

        Tenant tenant() throws IOException {
            Tenant t = new Tenant();
            Map<String, Object> p = ok(201, Request.post("/admin/partners").apiKey(OPERATOR).body(obj("name", "Hostile")));
            t.id = (String) Json.at(p, "payload", "partner_id");
            t.key = (String) Json.at(p, "payload", "api_key");
            t.query = "partner_id=" + t.id;
            String[] m = merchant(t, List.of("PPD", "WEB"));
            t.merchant = m[0];
            t.merchantKey = m[1];
            t.second = merchant(t, List.of("PPD"))[0];
            Map<String, Object> c = ok(201, Request.post("/customers").apiKey(t.key).body(obj("partner_id", t.id, "merchant_id", "global",
                    "name", "Grace Hopper", "routing_number", "026009593", "account_number", "918273645500", "account_type", "savings")));
            t.customer = (String) Json.at(c, "payload", "id");
            t.pending = createdId(debit(t, t.merchant, "10.00"));
            t.earlyPointer = pointerNow(t);
            t.last = createdId(debit(t, t.merchant, "20.00"));
            t.pointer = pointerNow(t);
            t.events = (String) ok(200, Request.get("/events").apiKey(t.merchantKey)).get("new_pointer");
            ok(200, Request.post("/admin/merchants/" + t.merchant + "/limits").apiKey(OPERATOR)
                    .body(obj("daily_count", 3, "daily_amount", "31.00")));
            ok(200, Request.post("/admin/partners/" + t.id + "/limits").apiKey(OPERATOR).body(obj("daily_count", 3)));
            return t;
        }

        static String createdId(Response r) {
            if (r.status() != 201) throw new IllegalStateException("set-up debit: " + r.raw());
            return r.string("payload", "id");
        }

        void name(String side, Tenant t) {
            values.put(side + ".id", t.id);
            values.put(side + ".key", t.key);
            values.put(side + ".merchant", t.merchant);
            values.put(side + ".merchant_key", t.merchantKey);
            values.put(side + ".second", t.second);
            values.put(side + ".customer", t.customer);
            values.put(side + ".pending", t.pending);
            values.put(side + ".last", t.last);
            values.put(side + ".early_pointer", t.earlyPointer);
            values.put(side + ".pointer", t.pointer);
            values.put(side + ".events", t.events);
        }

        // ---- templates (tests/src/hostile.rs: Values::expand)

        String value(String name) {
            String v = values.get(name);
            if (v == null) throw new IllegalStateException("no fixture value " + name);
            return v;
        }

        byte[] expand(String template) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(template.length() + 64);
            int from = 0;
            for (int at = template.indexOf("{{"); at >= 0; at = template.indexOf("{{", from)) {
                out.writeBytes(template.substring(from, at).getBytes(StandardCharsets.UTF_8));
                int end = template.indexOf("}}", at);
                if (end < 0) throw new IllegalStateException("an unclosed token in " + template);
                token(template.substring(at + 2, end), out);
                from = end + 2;
            }
            out.writeBytes(template.substring(from).getBytes(StandardCharsets.UTF_8));
            return out.toByteArray();
        }

        String text(String template) {
            byte[] b = expand(template);
            if (!isUtf8(b)) throw new IllegalStateException(template + ": not UTF-8");
            return new String(b, StandardCharsets.UTF_8);
        }

        void token(String token, ByteArrayOutputStream out) {
            int space = token.indexOf(' ');
            String word = space < 0 ? token : token.substring(0, space);
            String arg = space < 0 ? "" : token.substring(space + 1);
            switch (word) {
                case "repeat" -> {
                    int s = arg.indexOf(' ');
                    out.writeBytes(arg.substring(s + 1).repeat(Integer.parseInt(arg.substring(0, s))).getBytes(StandardCharsets.UTF_8));
                }
                case "nested_arrays" -> {
                    int n = Integer.parseInt(arg);
                    out.writeBytes(("[".repeat(n) + "]".repeat(n)).getBytes(StandardCharsets.UTF_8));
                }
                case "nested_objects" -> {
                    int n = Integer.parseInt(arg);
                    out.writeBytes(("{\"a\":".repeat(n) + "1" + "}".repeat(n)).getBytes(StandardCharsets.UTF_8));
                }
                case "hex" -> {
                    for (int i = 0; i + 1 < arg.length(); i += 2) out.write(Integer.parseInt(arg.substring(i, i + 2), 16));
                }
                case "cyrillic" -> out.writeBytes(cyrillic(value(arg)).getBytes(StandardCharsets.UTF_8));
                case "fullwidth" -> out.writeBytes(fullwidth(value(arg)).getBytes(StandardCharsets.UTF_8));
                case "upper" -> out.writeBytes(value(arg).toUpperCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8));
                case "forge" -> out.writeBytes(forge(value(arg)).getBytes(StandardCharsets.UTF_8));
                default -> {
                    int bracket = token.indexOf('[');
                    if (token.endsWith(":]") && bracket > 0) {
                        byte[] v = value(token.substring(0, bracket)).getBytes(StandardCharsets.UTF_8);
                        int start = Integer.parseInt(token.substring(bracket + 1, token.length() - 2));
                        out.write(v, start, v.length - start);
                    } else {
                        out.writeBytes(value(token).getBytes(StandardCharsets.UTF_8));
                    }
                }
            }
        }

        static String cyrillic(String id) {
            String latin = "acexopykmABEKMOT", twins = "асехорукмАВЕКМОТ";
            StringBuilder b = new StringBuilder();
            for (char c : id.toCharArray()) {
                int i = latin.indexOf(c);
                b.append(i < 0 ? c : twins.charAt(i));
            }
            if (b.toString().equals(id)) throw new IllegalStateException("no Cyrillic twin in " + id);
            return b.toString();
        }

        static String fullwidth(String id) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < id.length(); i++) {
                char c = id.charAt(i);
                if ((c >= '0' && c <= '9') || i == id.length() - 1) {
                    b.append(c > 0x20 && c < 0x7f ? (char) (c + 0xFEE0) : '\uFF10');
                } else {
                    b.append(c);
                }
            }
            return b.toString();
        }

        static String forge(String pointer) {
            char[] c = pointer.toCharArray();
            c[3] = c[3] == 'A' ? 'B' : 'A';
            return new String(c);
        }

        String neverIssued(String real) {
            String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
            StringBuilder b = new StringBuilder(real.substring(0, 4));
            while (b.length() < real.length()) b.append(alphabet.charAt(random.nextInt(alphabet.length())));
            return b.toString();
        }

        static boolean isUtf8(byte[] b) {
            try {
                StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b));
                return true;
            } catch (CharacterCodingException e) {
                return false;
            }
        }

        // ---- the corpus (tests/src/hostile.rs: corpus, body)

        List<Case> load() throws IOException {
            bases = map(Json.parseExact(Files.readString(hostileDir.resolve("support/bases.json"))));
            catalogue = map(Json.parse(Files.readString(hostileDir.resolve("support/catalogue.json"))));
            List<Path> files;
            try (Stream<Path> s = Files.list(hostileDir)) {
                files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
            }
            List<Case> cases = new ArrayList<>();
            Set<String> names = new HashSet<>();
            int skipped = 0;
            for (Path f : files) {
                for (Object o : list(map(Json.parseExact(Files.readString(f))).get("cases"))) {
                    Map<String, Object> c = new LinkedHashMap<>(map(o));
                    String name = (String) c.get("name");
                    check(names.add(name), f.getFileName() + ": the name " + name + " is taken");
                    if (Json.at(c, "hosts", "c") instanceof Map<?, ?> over) {
                        if (over.containsKey("skip")) {
                            skipped++;
                            continue;
                        }
                        over.forEach((k, v) -> {
                            if (!"why".equals(k)) c.put((String) k, v);
                        });
                    }
                    cases.add(new Case(name, f.getFileName().toString(), c.get("method") instanceof String m ? m : "GET",
                            (String) c.get("path"), (String) c.get("key"), (String) c.get("idempotency_key"), body(c),
                            (String) c.get("like_unknown"), map(c.get("expect"))));
                }
            }
            System.out.println("   " + cases.size() + " corpus cases as the host c (" + skipped + " left to other hosts)");
            return cases;
        }

        String body(Map<String, Object> c) {
            if (c.get("body") instanceof String text) return text;
            Object v = c.get("body_json") != null ? deepCopy(c.get("body_json"))
                    : c.get("base") instanceof String base ? deepCopy(bases.get(base)) : null;
            if (v == null) return null;
            TreeMap<String, Object> set = new TreeMap<>(CODE_POINTS);
            if (c.get("set") instanceof Map<?, ?> m) m.forEach((k, x) -> set.put((String) k, x));
            for (Map.Entry<String, Object> e : set.entrySet()) v = setPath(v, e.getKey(), e.getValue());
            TreeMap<String, Object> raw = new TreeMap<>(CODE_POINTS);
            if (c.get("set_raw") instanceof Map<?, ?> m) m.forEach((k, x) -> raw.put((String) k, x));
            int i = 0;
            for (String path : raw.keySet()) v = setPath(v, path, "@@raw" + i++ + "@@");
            String text = canonical(v);
            i = 0;
            for (Object literal : raw.values()) text = text.replace("\"@@raw" + i++ + "@@\"", (String) literal);
            return text;
        }

        /** tests/src/json_paths.rs: set the member at a /-separated path (array elements by index). */
        static Object setPath(Object root, String path, Object value) {
            String[] parts = path.split("/", -1);
            Object holder = root;
            for (int k = 0; k < parts.length; k++) {
                String part = parts[k];
                boolean last = k == parts.length - 1;
                if (holder instanceof List<?> l && part.matches("\\d+")) {
                    List<Object> list = list(l);
                    int i = Integer.parseInt(part);
                    if (last) list.set(i, value);
                    else holder = list.get(i);
                } else {
                    Map<String, Object> m = map(holder);
                    if (last) {
                        m.put(part, value);
                    } else {
                        if (m.get(part) == null) m.put(part, new LinkedHashMap<String, Object>());
                        holder = m.get(part);
                    }
                }
            }
            return root;
        }

        // ---- judging (tests/src/hostile.rs: check)

        boolean isCatalogueMessage(BigInteger code, String message) {
            if (!(catalogue.get(code.toString()) instanceof String template)) return false;
            int hole = template.indexOf("{}");
            if (hole < 0) return message.equals(template);
            String before = template.substring(0, hole), after = template.substring(hole + 2);
            return message.length() >= before.length() + after.length() && message.startsWith(before) && message.endsWith(after);
        }

        static final Object ABSENT = new Object();

        static Object pointer(Object v, String pointer) {
            if (pointer.isEmpty()) return v;
            Object at = v;
            for (String raw : pointer.substring(1).split("/", -1)) {
                String part = raw.replace("~1", "/").replace("~0", "~");
                if (at instanceof Map<?, ?> m) {
                    if (!m.containsKey(part)) return ABSENT;
                    at = m.get(part);
                } else if (at instanceof List<?> l && part.matches("\\d+")) {
                    int i = Integer.parseInt(part);
                    if (i >= l.size()) return ABSENT;
                    at = l.get(i);
                } else {
                    return ABSENT;
                }
            }
            return at;
        }

        /** Null when the answer is right, else why not. */
        String judge(Map<String, Object> expect, int status, String body) {
            int want = integer(expect.get("status")).intValueExact();
            String shortBody = body.length() > 300 ? body.substring(0, 300) : body;
            if (status != want) return "status " + status + ", expected " + want + ": " + shortBody;
            if (Boolean.TRUE.equals(expect.get("empty"))) return body.isEmpty() ? null : "a body: " + shortBody;
            Object v;
            try {
                v = Json.parse(body);
            } catch (Json.ParseException e) {
                return "not JSON (" + e.getMessage() + "): " + shortBody;
            }
            if (expect.get("json") instanceof Map<?, ?> members) {
                for (Map.Entry<?, ?> e : members.entrySet()) {
                    Object got = pointer(v, (String) e.getKey());
                    Object wantValue = e.getValue() instanceof String s ? text(s) : ABSENT;
                    if (!Objects.equals(got, wantValue)) return e.getKey() + " is " + got + ", expected " + wantValue + ": " + shortBody;
                }
                return null;
            }
            if (body.getBytes(StandardCharsets.UTF_8).length > 16 * 1024) return "a " + body.length() + "-character refusal";
            Object first = Json.at(v, "errors", 0);
            String field = Json.at(first, "field") instanceof String s ? s : "";
            String code = Json.at(first, "code") instanceof String s ? s : "";
            String wantField = expect.get("field") instanceof String s ? s : "";
            String wantCode = expect.get("code") instanceof String s ? s : "";
            if (status == 401) {
                Map<String, Object> exact = obj("success", false, "message", "Authentication failed.");
                if (!wantField.isEmpty()) {
                    exact.put("errors", List.of(obj("field", wantField, "code", wantCode, "message", Json.at(first, "message"))));
                }
                return exact.equals(v) ? null : "not exactly the authentication failure: " + shortBody;
            }
            if (!Boolean.FALSE.equals(Json.at(v, "success")) || !"E".equals(Json.at(v, "error_type"))) {
                return "not a refusal envelope: " + shortBody;
            }
            String message = Json.at(v, "message") instanceof String s ? s : "";
            Object expected = expect.get("message");
            boolean right;
            if (expected instanceof String exactText) {
                right = message.equals(exactText);
            } else if (integer(expected) != null) {
                BigInteger n = integer(expected);
                right = n.equals(Json.at(v, "error_code")) && isCatalogueMessage(n, message);
            } else {
                right = false;
            }
            if (!right) return "not message " + expected + ": " + shortBody;
            if (!field.equals(wantField) || !code.equals(wantCode)) {
                return "first problem (" + field + ", " + code + "), expected (" + wantField + ", " + wantCode + "): " + shortBody;
            }
            return null;
        }

        // ---- rows

        /** A JSON string of these bytes as serde_json escapes text; bytes that are not UTF-8 written as they are. */
        static byte[] jsonStringOf(byte[] bytes) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 16);
            out.write('"');
            int i = 0;
            while (i < bytes.length) {
                int n = utf8Length(bytes, i);
                if (n == 0) {
                    out.write(bytes[i++]);
                } else if (n == 1) {
                    int c = bytes[i++];
                    switch (c) {
                        case '"' -> out.writeBytes("\\\"".getBytes(StandardCharsets.US_ASCII));
                        case '\\' -> out.writeBytes("\\\\".getBytes(StandardCharsets.US_ASCII));
                        case '\n' -> out.writeBytes("\\n".getBytes(StandardCharsets.US_ASCII));
                        case '\r' -> out.writeBytes("\\r".getBytes(StandardCharsets.US_ASCII));
                        case '\t' -> out.writeBytes("\\t".getBytes(StandardCharsets.US_ASCII));
                        case '\b' -> out.writeBytes("\\b".getBytes(StandardCharsets.US_ASCII));
                        case '\f' -> out.writeBytes("\\f".getBytes(StandardCharsets.US_ASCII));
                        default -> {
                            if (c < 0x20) out.writeBytes(String.format("\\u%04x", c).getBytes(StandardCharsets.US_ASCII));
                            else out.write(c);
                        }
                    }
                } else {
                    out.write(bytes, i, n);
                    i += n;
                }
            }
            out.write('"');
            return out.toByteArray();
        }

        /** The length of the valid UTF-8 sequence at {@code i}, or 0. */
        static int utf8Length(byte[] b, int i) {
            int c = b[i] & 0xff;
            if (c < 0x80) return 1;
            int n, lo = 0x80, hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) n = 2;
            else if (c >= 0xE0 && c <= 0xEF) {
                n = 3;
                if (c == 0xE0) lo = 0xA0;
                if (c == 0xED) hi = 0x9F;
            } else if (c >= 0xF0 && c <= 0xF4) {
                n = 4;
                if (c == 0xF0) lo = 0x90;
                if (c == 0xF4) hi = 0x8F;
            } else return 0;
            if (i + n > b.length) return 0;
            int second = b[i + 1] & 0xff;
            if (second < lo || second > hi) return 0;
            for (int k = 2; k < n; k++) {
                int x = b[i + k] & 0xff;
                if (x < 0x80 || x > 0xBF) return 0;
            }
            return n;
        }

        Row row(Case c) {
            byte[] body = c.body() == null ? null : expand(c.body());
            Request r = new Request(text(c.method()), text(c.path()), null, c.key() == null ? null : text(c.key()),
                    c.idempotencyKey() == null ? null : text(c.idempotencyKey()), null);
            byte[] envelope;
            if (body == null || isUtf8(body)) {
                // The public path: the body as a Java String, sent as the envelope's string member.
                envelope = (body == null ? r : r.body(new String(body, StandardCharsets.UTF_8))).envelope().getBytes(StandardCharsets.UTF_8);
            } else {
                // Bytes a Java String cannot hold: the envelope as a C host writes it.
                byte[] head = r.envelope().getBytes(StandardCharsets.UTF_8);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                out.write(head, 0, head.length - 1);
                out.writeBytes(",\"body\":".getBytes(StandardCharsets.US_ASCII));
                out.writeBytes(jsonStringOf(body));
                out.write('}');
                envelope = out.toByteArray();
            }
            AchResult result = null;
            if (c.expect().get("result") instanceof String name) {
                result = java.util.Arrays.stream(AchResult.values()).filter(x -> x.cName().equals(name)).findFirst().orElseThrow();
            }
            return new Row(c.name(), c, envelope, result, c.expect().get("detail") instanceof String d ? d : "");
        }

        /** Envelopes only a binding sends (ffi/tests/hostile.rs's c_rows, in part). */
        List<Row> envelopeRows() {
            List<Row> rows = new ArrayList<>();
            byte[] whole = debitRequest(a, a.merchant, "1.00").envelope().getBytes(StandardCharsets.UTF_8);
            for (String shape : new String[] {"arrays", "objects"}) {
                int n = 100_000;
                String text = shape.equals("arrays") ? "[".repeat(n) + "]".repeat(n) : "{\"a\":".repeat(n) + "1" + "}".repeat(n);
                rows.add(new Row("an envelope of 100,000 nested " + shape, null, text.getBytes(StandardCharsets.UTF_8),
                        AchResult.INVALID_ARGUMENT, "request_json"));
                rows.add(new Row("a body member of 100,000 nested " + shape, null,
                        ("{\"method\":\"POST\",\"path\":\"/transactions\",\"api_key\":\"" + a.key + "\",\"body\":" + text + "}")
                                .getBytes(StandardCharsets.UTF_8), AchResult.INVALID_ARGUMENT, "recursion limit exceeded"));
            }
            for (int at : new int[] {0, 1, 9, whole.length / 2, whole.length - 1}) {
                byte[] cut = whole.clone();
                cut[at] = 0;
                rows.add(new Row("a NUL at byte " + at, null, cut, AchResult.INVALID_JSON, "request_json"));
            }
            byte[][] bad = {{(byte) 0xff}, {(byte) 0xc0, (byte) 0x80}, {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xe2, (byte) 0x82}};
            for (int k = 0; k < bad.length; k++) {
                int at = 7 * (k + 1) * 5;
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                out.write(whole, 0, at);
                out.writeBytes(bad[k]);
                out.write(whole, at + 1, whole.length - at - 1);
                rows.add(new Row("invalid UTF-8 at byte " + at, null, out.toByteArray(), AchResult.INVALID_UTF8,
                        "request_json is not valid UTF-8 (bad byte at offset "));
            }
            for (String text : new String[] {"", " ", "null", "\"GET\"", "1", "{}", "{\"method\":\"GET\"}", "{\"path\":\"/\"}"}) {
                rows.add(new Row("envelope " + text, null, text.getBytes(StandardCharsets.UTF_8),
                        text.isBlank() ? AchResult.INVALID_JSON : AchResult.INVALID_ARGUMENT, "request_json"));
            }
            // A body nested past the engine's limit, written by ach.Json from Java values.
            Object nested = List.of();
            for (int k = 0; k < 200; k++) nested = List.of(nested);
            rows.add(new Row("a Java body nested 200 deep", null,
                    Request.post("/transactions").apiKey(a.key).body(nested).envelope().getBytes(StandardCharsets.UTF_8),
                    AchResult.INVALID_ARGUMENT, "recursion limit exceeded"));
            return rows;
        }

        Request debitRequest(Tenant t, String merchant, String amount) {
            return Request.post("/transactions").apiKey(t.key).body(obj("partner_id", t.id, "merchant_id", merchant, "amount", amount,
                    "description", "java hostile", "type", "debit", "standard_entry_class", "PPD", "customer", INLINE));
        }

        /** Null when the row is answered as it should be (and nothing was stored), else why not. */
        String run(Row r, boolean judge) {
            Response answer;
            try {
                answer = callEnvelope(r.envelope());
            } catch (AchException e) {
                errorEnvelopeBytes += r.envelope().length;
                detailBytes += e.detail().length() + 1;
                if (r.result() == null) return "threw " + e;
                if (e.result() != r.result() || !e.detail().contains(r.detail()) || e.detail().length() >= 1024) {
                    return e.getClass().getSimpleName() + " " + e.getMessage() + ", expected " + r.result().cName() + " " + r.detail();
                }
                return judge ? nothingStored() : null;
            }
            if (r.result() != null) return "answered " + abbreviate(answer.raw()) + ", expected " + r.result().cName();
            if (!judge) return null;
            String why = judge(r.c().expect(), answer.status(), answer.bodyText() == null ? "" : answer.bodyText());
            if (why != null) return why;
            if (r.c().likeUnknown() != null) {
                String real = value(r.c().likeUnknown());
                String never = neverIssued(real);
                String text = new String(r.envelope(), StandardCharsets.UTF_8);
                Response other = callEnvelope(text.replace(real, never).getBytes(StandardCharsets.UTF_8));
                if (!other.raw().replace(never, real).equals(answer.raw())) return "answered unlike a never-issued id: " + other.raw();
            }
            return nothingStored();
        }

        /** Null when neither partner's feeds moved (read through the same engine), else what moved. */
        String nothingStored() {
            for (Tenant t : new Tenant[] {a, b}) {
                Response s = call(Request.get("/status-changes/" + t.pointer).query(t.query).apiKey(t.key));
                if (s.status() != 200 || !(s.at("payload", "changes") instanceof List<?> l) || !l.isEmpty()) {
                    return "the status-changes feed moved: " + abbreviate(s.raw());
                }
                Response e = call(Request.get("/events/" + t.events).apiKey(t.merchantKey));
                if (e.status() != 200 || !(e.at("events") instanceof List<?> l2) || !l2.isEmpty()) {
                    return "the events feed moved: " + abbreviate(e.raw());
                }
            }
            return null;
        }

        void countersUnchanged(String when) {
            for (Tenant t : new Tenant[] {a, b}) {
                check(debit(t, t.merchant, "1.00").status() == 201, when + ": one more debit");
                check(BigInteger.valueOf(22).equals(debit(t, t.merchant, "1.00").at("error_code")), when + ": then message 22");
                check(BigInteger.valueOf(24).equals(debit(t, t.second, "1.00").at("error_code")), when + ": then message 24");
            }
        }

        void run() throws Throwable {
            Files.createDirectories(dir);
            engine = Engine.open(options());
            a = tenant();
            b = tenant();
            values.put("operator", OPERATOR);
            name("a", a);
            name("b", b);
            check(nothingStored() == null, "set-up: nothing stored");
            List<Row> rows = new ArrayList<>();
            for (Case c : load()) rows.add(row(c));
            int shared = rows.size();
            rows.addAll(envelopeRows());
            check(shared > 350, shared + " corpus cases");

            // The table, every row judged.
            long t0 = System.nanoTime(), calls0 = calls;
            int rowsFailed = 0;
            for (Row r : rows) {
                String why = run(r, true);
                if (!check(why == null, "hostile row " + r.name() + ": " + why)) rowsFailed++;
            }
            double pass = (System.nanoTime() - t0) / 1e9;
            System.out.printf("   %d rows (%d from the corpus), %d failed; %d calls in %.1f s%n", rows.size(), shared, rowsFailed,
                    calls - calls0, pass);

            memory(rows);

            // Reopened from the file: nothing was stored, the counters did not move.
            engine.close();
            engine = Engine.open(options());
            check(nothingStored() == null, "reopened: nothing stored");
            countersUnchanged("reopened");
            engine.close();
        }

        // ---- memory

        /** A field of /proc/self/status ({@code VmRSS}, {@code RssAnon}...), in bytes. */
        static long status(String field) throws IOException {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field + ":")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
            throw new IllegalStateException("no " + field + " in /proc/self/status");
        }


        static final MethodHandle MALLOC_TRIM = Linker.nativeLinker().defaultLookup().find("malloc_trim")
                .map(s -> Linker.nativeLinker().downcallHandle(s, FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG)))
                .orElse(null);

        /** glibc's {@code struct mallinfo2}: ten size_t. */
        static final java.lang.foreign.StructLayout MALLINFO = java.lang.foreign.MemoryLayout.structLayout(
                java.util.Collections.nCopies(10, ValueLayout.JAVA_LONG).toArray(new java.lang.foreign.MemoryLayout[0]));

        static final MethodHandle MALLINFO2 = Linker.nativeLinker().defaultLookup().find("mallinfo2")
                .map(s -> Linker.nativeLinker().downcallHandle(s, FunctionDescriptor.of(MALLINFO))).orElse(null);

        /** The bytes malloc has handed out and not had back, over every arena (mallinfo2: uordblks + hblkhd), or -1. */
        static long mallocInUse() throws Throwable {
            if (MALLINFO2 == null) return -1;
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
                java.lang.foreign.MemorySegment m =
                        (java.lang.foreign.MemorySegment) MALLINFO2.invokeExact((java.lang.foreign.SegmentAllocator) arena);
                return m.getAtIndex(ValueLayout.JAVA_LONG, 7) + m.getAtIndex(ValueLayout.JAVA_LONG, 4);
            }
        }

        /**
         * The process's memory once the JIT is idle, the Java heap collected and glibc has
         * handed its free pages back, the least of three samples: {@code {VmRSS, RssAnon,
         * malloc in use}}. RssAnon is
         * VmRSS without the pages of mapped files (libach's and the JDK's code, which the
         * kernel faults in and drops as it likes); malloc's bytes in use are exactly the
         * native memory allocated and not freed (libach's and the JVM's), without the free
         * memory glibc keeps (which moves RssAnon by tens of MB from one pass to the next).
         */
        static long[] settled() throws Throwable {
            // Let the JIT finish what it is compiling: a compiler thread's memory is native too
            // (a C2 compilation in progress holds about 10 MB).
            java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
            if (jit != null && jit.isCompilationTimeMonitoringSupported()) {
                long seen = -1;
                for (int i = 0, quiet = 0; i < 300 && quiet < 25; i++) { // 2.5 s without a compilation finishing
                    long now = jit.getTotalCompilationTime();
                    quiet = now == seen ? quiet + 1 : 0;
                    seen = now;
                    Thread.sleep(100);
                }
            }
            // Then the least of three samples, each after a collection and a trim: memory some
            // thread holds for a moment (a compilation, a collection's work space) is gone in
            // one of them; a leak is in all three.
            long[] least = {Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE};
            for (int sample = 0; sample < 3; sample++) {
                System.gc();
                Thread.sleep(300);
                if (MALLOC_TRIM != null) {
                    int ignored = (int) MALLOC_TRIM.invokeExact(0L);
                }
                long[] now = {status("VmRSS"), status("RssAnon"), mallocInUse()};
                for (int k = 0; k < 3; k++) least[k] = Math.min(least[k], now[k]);
            }
            return least;
        }

        static void trace(String when) throws Throwable {
            long[] m = settled();
            System.out.printf("   %s: malloc in use %.1f MB, RssAnon %.1f MB, VmRSS %.1f MB%n", when, m[2] / 1048576.0,
                    m[1] / 1048576.0, m[0] / 1048576.0);
        }

        /**
         * Memory: the whole table again, once to warm up and then {@code ach.test.leakPasses}
         * times (answers checked, the feeds not re-read), while the process's native memory
         * is watched. Each pass adds calls that make a leak of any per-call buffer large
         * enough to see: {@code GET /openapi.json} (a 200 KB answer: the table's own answers
         * are refusals of a few hundred bytes), the table's envelopes libach refuses (the
         * error path: an envelope arena, a detail buffer, an exception), and validations of
         * a long unknown kind (a long detail).
         *
         * <p>Judged: malloc's bytes in use (see {@link #settled}) may grow by less than
         * {@link #MALLOC_BOUND_MB}, while a leak of one answer buffer a call, of one envelope
         * a call, or of one envelope a failed call, would add more than 4 times that (the test
         * checks it would); and RssAnon, which glibc's free-but-kept pages move, by less than
         * {@link #RSS_BOUND_MB} (a leak outside malloc).
         */
        void memory(List<Row> rows) throws Throwable {
            int passes = Integer.getInteger("ach.test.leakPasses", 3);
            if (passes <= 0) {
                System.out.println("   memory: skipped (ach.test.leakPasses=0)");
                return;
            }
            Runtime rt = Runtime.getRuntime();
            boolean fixedHeap = rt.totalMemory() == rt.maxMemory();
            long bound = MALLOC_BOUND_MB << 20, share = (5 * bound + passes - 1) / passes;
            byte[] openapi = Request.get("/openapi.json").envelope().getBytes(StandardCharsets.UTF_8);
            long answerSize = callEnvelope(openapi).raw().length();
            long largePerPass = (share + answerSize - 1) / answerSize;
            List<Row> failing = rows.stream().filter(r -> r.result() != null).toList();
            long failingBytes = failing.stream().mapToLong(r -> r.envelope().length).sum();
            long failingRounds = (share + failingBytes - 1) / failingBytes;
            String longKind = "k".repeat(100_000);
            long kindPerPass = (share + longKind.length() - 1) / longKind.length();
            int[] wrong = {0};
            Body extras = () -> {
                for (long k = 0; k < largePerPass; k++) {
                    if (callEnvelope(openapi).status() != 200) wrong[0]++;
                }
                for (long k = 0; k < failingRounds; k++) {
                    for (Row r : failing) {
                        if (run(r, false) != null) wrong[0]++;
                    }
                }
                for (long k = 0; k < kindPerPass; k++) {
                    try {
                        Validation.validate(longKind, "{}");
                        wrong[0]++;
                    } catch (AchArgumentException e) {
                        detailBytes += e.detail().length() + 1;
                        errorEnvelopeBytes += longKind.length() + 1;
                    }
                }
            };
            boolean trace = Boolean.getBoolean("ach.test.traceRss");
            if (trace) trace("after the judged pass");
            // A warm-up pass, not measured: the JIT, the allocators' arenas and thresholds settle.
            for (Row r : rows) run(r, false);
            extras.run();
            long[] before = settled();
            long c0 = calls, a0 = answerBytes, e0 = envelopeBytes, f0 = errorEnvelopeBytes, d0 = detailBytes, t0 = System.nanoTime();
            wrong[0] = 0;
            for (int p = 0; p < passes; p++) {
                for (Row r : rows) {
                    if (run(r, false) != null) wrong[0]++;
                }
                extras.run();
                if (trace) trace("after pass " + (p + 1));
            }
            long[] after = settled();
            long n = calls - c0, answers = answerBytes - a0, envelopes = envelopeBytes - e0;
            long errorEnvelopes = errorEnvelopeBytes - f0, details = detailBytes - d0;
            long rssGrowth = after[1] - before[1], mallocGrowth = after[2] - before[2];
            // A leaked AchBuffer costs at least its bytes and its NUL (counted) and malloc's 16-byte header.
            long leakedAnswers = answers + 16 * n;
            double mb = 1048576.0;
            System.out.printf("   memory: %d passes of the table, each with %d x GET /openapi.json, %d x its %d refused envelopes,%n"
                    + "   %d x a %d-character unknown validation kind: %d calls in %.1f s%n", passes, largePerPass, failingRounds,
                    failing.size(), kindPerPass, longKind.length(), n + passes * kindPerPass, (System.nanoTime() - t0) / 1e9);
            System.out.printf("   malloc in use %.1f MB -> %.1f MB (%+.1f MB; bound %d MB)%n", before[2] / mb, after[2] / mb,
                    mallocGrowth / mb, MALLOC_BOUND_MB);
            System.out.printf("   RssAnon %.1f MB -> %.1f MB (%+.1f MB; bound %d MB); VmRSS %.1f MB -> %.1f MB (%+.1f MB)%n",
                    before[1] / mb, after[1] / mb, rssGrowth / mb, RSS_BOUND_MB, before[0] / mb, after[0] / mb,
                    (after[0] - before[0]) / mb);
            System.out.printf("   a leak would have added at least: %.0f MB (an answer buffer a call), %.0f MB (an envelope a call),%n"
                    + "   %.0f MB (an envelope a failed call), %.0f MB (a detail buffer a failed call)%n", leakedAnswers / mb,
                    envelopes / mb, errorEnvelopes / mb, details / mb);
            if (!fixedHeap) System.out.println("   note: the Java heap is not fixed (-Xms = -Xmx): its growth counts in RssAnon");
            check(wrong[0] == 0, wrong[0] + " calls answered otherwise during the memory passes");
            check(leakedAnswers > 4 * bound && envelopes > 4 * bound && errorEnvelopes > 4 * bound,
                    "the passes are long enough: a leak per call would exceed 4 x the bound");
            if (before[2] < 0) {
                System.out.println("   note: no mallinfo2 (not glibc): malloc's bytes in use are not checked");
            } else {
                check(mallocGrowth < bound, String.format("malloc in use grew %.1f MB over %d calls (bound %d MB)", mallocGrowth / mb,
                        n, MALLOC_BOUND_MB));
            }
            check(rssGrowth < RSS_BOUND_MB << 20, String.format("RssAnon grew %.1f MB over %d calls (bound %d MB)", rssGrowth / mb, n,
                    RSS_BOUND_MB));
        }

        /** The growth of malloc's bytes in use allowed over the measured passes. */
        static final long MALLOC_BOUND_MB = Long.getLong("ach.test.mallocBoundMB", 16);

        /** The growth of RssAnon allowed (coarse: glibc's kept free pages move it by a few MB, and by 30 MB once seen). */
        static final long RSS_BOUND_MB = Long.getLong("ach.test.rssBoundMB", 48);
    }
}
