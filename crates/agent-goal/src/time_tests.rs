//! Tests of the civil-date conversion behind `now_rfc3339`.

use super::*;

#[test]
fn known_instants_format_exactly() {
    let cases = [
        (0, "1970-01-01T00:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (951_868_799, "2000-02-29T23:59:59Z"),
        (951_868_800, "2000-03-01T00:00:00Z"),
        (1_700_000_000, "2023-11-14T22:13:20Z"),
        (1_709_164_800, "2024-02-29T00:00:00Z"),
        (4_102_444_800, "2100-01-01T00:00:00Z"),
    ];
    for (secs, expected) in cases {
        assert_eq!(rfc3339_from_unix(secs), expected, "{secs} seconds");
    }
}

#[test]
fn now_has_the_rfc3339_shape() {
    let now = now_rfc3339();
    assert_eq!(now.len(), 20, "{now}");
    assert!(now.ends_with('Z'));
    assert_eq!(&now[4..5], "-");
    assert_eq!(&now[10..11], "T");
    assert!(now.as_str() > "2024");
}
