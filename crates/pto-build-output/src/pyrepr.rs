//! Python renderings of JSON values (`repr` and type names of what `json.loads` returns);
//! the string, float and list renderings are `pto_base::pyrepr`'s, re-exported here.

pub(crate) use pto_base::pyrepr::{double_quoted, repr_float, repr_str, repr_str_list};

/// The Python type name of a JSON value as `json.loads` returns it.
pub(crate) fn json_type_name(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// `repr(v)` of the Python object `json.loads` makes of a JSON value.
pub(crate) fn repr_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => repr_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => repr_str(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(repr_json).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", repr_str(k), repr_json(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_json(input: &str, expected_repr: &str, expected_type: &str) {
        let value: serde_json::Value = serde_json::from_str(input).unwrap();
        assert_eq!(repr_json(&value), expected_repr, "repr of {input}");
        assert_eq!(json_type_name(&value), expected_type, "type of {input}");
    }

    #[test]
    fn json_values_render_as_python_objects() {
        check_json("null", "None", "NoneType");
        check_json("true", "True", "bool");
        check_json("-1", "-1", "int");
        check_json("1.5", "1.5", "float");
        check_json("\"mro\"", "'mro'", "str");
        check_json("[1, true, null]", "[1, True, None]", "list");
        check_json("{\"a\": 1}", "{'a': 1}", "dict");
    }
}
