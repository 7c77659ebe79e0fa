//! Tests of reading a script's commands: each script, the commands found, and whether some of
//! what runs is unknown.

use super::commands;

fn check(script: &str, expected: &[&str], unknown: bool) {
    let found = commands(script);
    let got: Vec<String> = found.commands.iter().map(|words| words.join(" ")).collect();
    assert_eq!(got, expected, "{script}");
    assert_eq!(
        found.unknown.is_some(),
        unknown,
        "{script}: {:?}",
        found.unknown
    );
}

#[test]
fn commands_are_found_through_quotes_wrappers_and_substitutions() {
    check("ls -la", &["ls -la"], false);
    check("a && b || c; d | e &", &["a", "b", "c", "d", "e"], false);
    check("\"r\"m -rf 'x y'", &["rm -rf x y"], false);
    check("sudo -u root env A=1 nice -n 2 rm x", &["rm x"], false);
    check("timeout -s KILL 5 make", &["make"], false);
    check("sh -c 'a; b'", &["a", "b"], false);
    check("eval 'a && b'", &["a", "b"], false);
    check("echo $(a) `b`", &["a", "b", "echo \u{0} \u{0}"], false);
    check("find . -exec rm {} \\;", &["rm {}"], false);
    check("find x -delete", &["rm -r -f x"], false);
    check("xargs", &[], false);
    check("command -v rm", &[], false);
}

#[test]
fn what_cannot_be_known_is_said() {
    check("$CMD -rf x", &[], true);
    check("bash script.sh", &[], true);
    check("echo x | sh", &["echo x"], true);
    check("echo 'unterminated", &[], true);
    check("eval \"$X\"", &[], true);
}
