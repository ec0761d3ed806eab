fn main() {
    std::process::exit(abprof::cli::main());
}
