//! Editing JSON values by `/`-separated member paths, and deeply nested texts:
//! what the hostile-input tables (router, C ABI) build their rows with.

use serde_json::Value;

/// Set the member at a `/`-separated path (array elements by index).
pub fn set(v: &mut Value, path: &str, value: Value) {
    let mut at = v;
    for part in path.split('/') {
        at = match part.parse::<usize>() {
            Ok(i) if at.is_array() => &mut at[i],
            _ => &mut at[part],
        };
    }
    *at = value;
}

/// Every leaf's `/`-separated path (scalars, and empty or null containers).
pub fn leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
    let join = |k: &str| if prefix.is_empty() { k.to_owned() } else { format!("{prefix}/{k}") };
    match v {
        Value::Object(m) if !m.is_empty() => m.iter().for_each(|(k, x)| leaves(x, &join(k), out)),
        Value::Array(a) if !a.is_empty() => {
            a.iter().enumerate().for_each(|(i, x)| leaves(x, &join(&i.to_string()), out))
        }
        _ => out.push(prefix.to_owned()),
    }
}

/// `depth` nested empty arrays.
pub fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` nested objects `{"a": … 1 …}`.
pub fn nested_objects(depth: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}
