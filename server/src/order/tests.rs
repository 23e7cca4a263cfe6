use super::*;

const VALID: &str = r#"{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}"#;

/// VALID with `field` set to the raw JSON text `value` (or removed when `None`).
fn with(field: &str, value: Option<&str>) -> String {
    let mut doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(VALID).unwrap();
    match value {
        // A placeholder, replaced as text: serde_json would not carry e.g. 1e400.
        Some(_) => doc.insert(field.into(), "@value@".into()),
        None => doc.remove(field),
    };
    let text = serde_json::to_string(&doc).unwrap();
    text.replace("\"@value@\"", value.unwrap_or_default())
}

fn rejected(body: &str) -> ApiError {
    parse(body.as_bytes()).expect_err(body)
}

fn assert_422(body: &str, field: &str) {
    let err = rejected(body);
    assert_eq!(
        err.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{body}: {err:?}"
    );
    assert_eq!(err.field, Some(field), "{body}: {err:?}");
    assert!(err.message.contains(field), "{err:?}");
}

#[test]
fn the_client_stream_order_parses() {
    let order = parse(VALID.as_bytes()).unwrap();
    assert_eq!(order.side, Side::Sell);
    assert_eq!(order.symbol, 1301);
    assert_eq!(order.price, 10_005);
    assert_eq!(order.quantity, 200);
    assert_eq!(order.market_type, MarketType::Common);
    assert_eq!(order.price_type, PriceType::Limit);
    assert_eq!(order.time_in_force, TimeInForce::Rod);
    assert_eq!(order.order_type, OrderType::Stock);
    assert_eq!(order.client_timestamp, "2026-11-22T10:00:00.123456Z");
    assert!(matches!(order.client_timestamp, Cow::Borrowed(_)));
    assert_eq!(order.limit(), Some(10_005));
    assert_eq!(order.client_time.timestamp_subsec_micros(), 123_456);
}

#[test]
fn every_enum_value_is_accepted() {
    for (field, values) in [
        ("buy_sell", &["buy", "sell"][..]),
        ("market_type", &["common", "odd", "fixed"]),
        ("price_type", &["limit", "market"]),
        ("time_in_force", &["rod", "ioc", "fok"]),
        ("order_type", &["stock", "margin", "short"]),
    ] {
        for value in values {
            let body = with(field, Some(&format!("\"{value}\"")));
            assert!(parse(body.as_bytes()).is_ok(), "{body}");
        }
    }
    let body = with("price_type", Some("\"market\""));
    let market = parse(body.as_bytes()).unwrap();
    assert_eq!(market.limit(), None);
}

#[test]
fn enum_error_texts_list_the_wire_names_as_a_sentence() {
    use super::field::WireEnum;
    assert_eq!(Side::EXPECTED, r#""buy" or "sell""#);
    assert_eq!(MarketType::EXPECTED, r#""common", "odd" or "fixed""#);
    assert_eq!(PriceType::EXPECTED, r#""limit" or "market""#);
    assert_eq!(TimeInForce::EXPECTED, r#""rod", "ioc" or "fok""#);
    assert_eq!(OrderType::EXPECTED, r#""stock", "margin" or "short""#);
}

#[test]
fn extra_fields_are_ignored_and_key_order_is_free() {
    let body = r#"{"note":{"a":[1,2]},"client_timestamp":"2026-11-22T10:00:00Z","user_def":"","order_type":"stock","time_in_force":"ioc","price_type":"limit","market_type":"odd","quantity":1,"price":99,"symbol":1,"buy_sell":"buy"}"#;
    let order = parse(body.as_bytes()).unwrap();
    assert_eq!(order.price, 9_900);
    assert_eq!(order.time_in_force, TimeInForce::Ioc);
}

#[test]
fn timestamps_with_any_fraction_or_offset_are_accepted() {
    for ts in [
        "2026-11-22T10:00:00Z",
        "2026-11-22T10:00:00.1Z",
        "2026-11-22T10:00:00.123456789123Z",
        "2026-11-22T18:00:00.5+08:00",
        "2026-11-22t10:00:00z",
    ] {
        let body = with("client_timestamp", Some(&format!("\"{ts}\"")));
        let order = parse(body.as_bytes()).unwrap_or_else(|e| panic!("{ts}: {e:?}"));
        assert_eq!(order.client_timestamp, ts);
    }
}

#[test]
fn malformed_json_is_400_without_a_field() {
    for body in [
        "",
        "{",
        "{bad",
        "not json",
        r#"{"symbol":1301,}"#,
        &format!("{VALID} x"),
        r#"{"price":NaN}"#,
    ] {
        let err = rejected(body);
        assert_eq!(err.status, StatusCode::BAD_REQUEST, "{body:?}: {err:?}");
        assert_eq!(err.field, None);
        assert!(err.message.starts_with("malformed JSON"), "{err:?}");
    }
}

#[test]
fn json_that_is_not_an_object_is_422_without_a_field() {
    for body in ["[]", "42", "\"order\"", "null"] {
        let err = rejected(body);
        assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(err.field, None);
    }
}

#[test]
fn every_field_name_maps_back_to_its_field() {
    for field in Field::ALL {
        assert_eq!(Field::from_key(field.name()), Some(field));
    }
    assert_eq!(Field::from_key("Symbol"), None);
}

#[test]
fn each_missing_field_is_named() {
    for field in Field::ALL {
        assert_422(&with(field.name(), None), field.name());
    }
}

#[test]
fn wrong_types_name_their_field() {
    for (field, value) in [
        ("buy_sell", "1"),
        ("symbol", "\"2330\""),
        ("symbol", "23.5"),
        ("symbol", "-1"),
        ("symbol", "4294967296"),
        ("price", "\"100.05\""),
        ("quantity", "100.5"),
        ("quantity", "\"100\""),
        ("quantity", "18446744073709551615"),
        ("market_type", "null"),
        ("user_def", "7"),
        ("client_timestamp", "1700000000"),
    ] {
        assert_422(&with(field, Some(value)), field);
    }
}

#[test]
fn unknown_enum_values_name_their_field() {
    for field in [
        "buy_sell",
        "market_type",
        "price_type",
        "time_in_force",
        "order_type",
    ] {
        assert_422(&with(field, Some("\"other\"")), field);
    }
    // Case matters: the values are lowercase.
    assert_422(&with("buy_sell", Some("\"BUY\"")), "buy_sell");
}

#[test]
fn out_of_range_values_name_their_field() {
    for (field, value) in [
        ("symbol", "0"),
        ("quantity", "0"),
        ("quantity", "-100"),
        ("quantity", "1000000001"),
        ("price", "0"),
        ("price", "-1.5"),
        ("price", "1e400"),
        ("price", "100.001"),
        ("price", "0.001"),
        ("price", "1000000000.01"),
        ("user_def", "\"123456789012345678901234567890123\""),
        ("user_def", "\"ééééééééééééééééé\""), // 17 chars, 34 bytes
        ("client_timestamp", "\"2026-11-22 10:00:00\""),
        ("client_timestamp", "\"2026-11-22T10:00:00\""),
        ("client_timestamp", "\"2026-13-22T10:00:00Z\""),
        ("client_timestamp", "\"yesterday\""),
    ] {
        assert_422(&with(field, Some(value)), field);
    }
}

#[test]
fn duplicate_fields_are_refused() {
    let body = VALID.replacen('{', r#"{"price":99.5,"#, 1);
    assert_422(&body, "price");
}

#[test]
fn escaped_strings_are_read_too() {
    let body = with("client_timestamp", Some(r#""2026-11-22T10:00:00\u002E5Z""#));
    let order = parse(body.as_bytes()).unwrap();
    assert_eq!(order.client_timestamp, "2026-11-22T10:00:00.5Z");
    let user_def = with("user_def", Some(r#""a\"b""#));
    assert!(parse(user_def.as_bytes()).is_ok());
}

#[test]
fn prices_convert_to_exact_ticks() {
    for (price, ticks) in [
        (99.5, 9_950),
        (100.05, 10_005),
        (100.5, 10_050),
        (0.01, 1),
        (1.1, 110),
        (123_456.78, 12_345_678),
        (999_999_999.99, 99_999_999_999),
    ] {
        assert_eq!(price_ticks(price).unwrap(), ticks, "{price}");
    }
    for price in [f64::NAN, f64::INFINITY, 0.0, -0.01, 0.005, 100.055] {
        assert!(price_ticks(price).is_err(), "{price}");
    }
}

#[test]
fn every_client_price_converts() {
    // The order stream sends 99.50 ..= 100.50 in steps of 0.05.
    for step in 0..=20u64 {
        let text = format!("{:.2}", (9_950 + 5 * step) as f64 / 100.0);
        let price: f64 = text.parse().unwrap();
        assert_eq!(price_ticks(price).unwrap(), 9_950 + 5 * step, "{text}");
    }
}
