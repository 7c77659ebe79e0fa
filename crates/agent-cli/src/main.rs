//! The `agent` command: the composition root that wires a store, a model provider and the
//! runner together. Its subcommands arrive with the command-line work; today it reports its
//! version.

fn main() {
    #[allow(clippy::print_stdout)]
    {
        println!("agent {}", env!("CARGO_PKG_VERSION"));
    }
}
