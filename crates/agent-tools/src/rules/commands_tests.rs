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

#[test]
fn hidden_commands_are_found_or_said_unknown() {
    check(
        "shopt -s expand_aliases\nalias x='rm -rf'\nx target",
        &["shopt -s expand_aliases", "alias x=rm -rf", "rm -rf target"],
        false,
    );
    check("$'\\x72m' -rf t", &["rm -rf t"], false);
    check("{rm,-rf,t}", &["rm -rf t"], false);
    check("rm -r{f,} t", &["rm -rf -r t"], false);
    check("echo {1..3}", &["echo 1 2 3"], false);
    check("echo '{a,b}'", &["echo {a,b}"], false);
    check(
        "trap 'rm -rf t' EXIT",
        &["rm -rf t", "trap rm -rf t EXIT"],
        false,
    );
    check("[[ -n $(rm -rf t) ]]", &["rm -rf t"], false);
    check(": ${x:-$(rm -rf t)}", &["rm -rf t", ": \u{0}"], false);
    check("/usr/bin/r[m] -rf t", &[], true);
    check(". ./script", &[". ./script"], true);
    check("BASH_ENV=x bash -c true", &["true"], true);
    check(
        "x=$(cat f); echo $(( x + 1 ))",
        &["cat f", "echo \u{0}"],
        true,
    );
    check("x=4; echo $(( x + 1 ))", &["echo \u{0}"], false);
    check(
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        &["echo \u{0}"],
        false,
    );
}
