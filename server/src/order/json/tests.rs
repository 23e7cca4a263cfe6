//! The fast path against the serde path on chosen bodies (the fuzz tests do it on
//! generated ones).

use super::*;

/// Bodies the fast path must read exactly as serde does, or leave to it.
#[test]
fn the_fast_path_reads_what_serde_reads_or_declines() {
    let base = r#"{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;
    let mut bodies = vec![
        base.to_string(),
        format!(" \n{base}\r\t "),
        base.replace(',', " ,\n ").replace(':', " : "),
        base.replace(r#""symbol":1301,"#, "")
            .replace('{', r#"{"symbol":1301,"#),
        base.replace('}', r#","extra":[1,{"a":null}]}"#),
        base.replace(r#""hftbench""#, r#""""#),
        base.replace(r#""hftbench""#, r#""h\"f""#),
        base.replace(r#""hftbench""#, "\"caf\u{e9}\""),
        base.replace(r#""hftbench""#, "\"a\tb\""),
        base.replace(r#""hftbench""#, "\"a\t\""),
        base.replace(r#""hftbench""#, "\"a\u{7f}\""),
        base.replace(r#""sell""#, r#""sell ""#),
        base.replace(r#""price""#, r#""price_""#),
        base.replace(r#""price""#, r#""Price""#),
        base.replace(r#"{"#, r#"{"buy_sell_x":1,"#),
        base.replace("sell", "buy"),
        base.replace("sell", "BUY"),
        base.replace('}', r#","symbol":1}"#),
        base.replace('}', "}x"),
        base.replace('}', ""),
        base.replace(r#""symbol":1301"#, r#""symbol":"1301""#),
        base.replace("1301", "4294967295"),
        base.replace("1301", "4294967296"),
        base.replace("1301", "0"),
        base.replace("1301", "01301"),
        base.replace("1301", "1301.0"),
        base.replace(":200", ":-200"),
        base.replace(":200", ":999999999999999"),
        base.replace(":200", ":9999999999999999999999"),
        base.replace(":200", ":2e2"),
        base.replace(":200", ":null"),
        "{}".to_string(),
        "[]".to_string(),
        String::new(),
    ];
    for price in [
        "100",
        "99.5",
        "100.05",
        "0.01",
        "1000000000",
        "1000000000.01",
        "123456789012.345",
        "1234567890123456",
        "100.",
        "1e2",
        "-1",
        "0",
        "00.5",
        "100.050",
        "0.1",
        "0.3",
        "5e-324",
        "1e999",
    ] {
        bodies.push(base.replace("100.05", price));
    }
    let mut fast_reads = 0;
    for body in &bodies {
        if let Some(raw) = fast::read(body.as_bytes()) {
            fast_reads += 1;
            let serde = read_serde(body.as_bytes()).map_err(|e| e.message);
            assert_eq!(Ok(raw), serde, "{body}");
        }
    }
    assert!(fast::read(base.as_bytes()).is_some());
    assert!(
        fast_reads >= 12,
        "only {fast_reads} bodies took the fast path"
    );
}
