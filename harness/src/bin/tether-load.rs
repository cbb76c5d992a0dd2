//! `tether-load`: N agents against a running Tether server; see `harness/README.md`.

use clap::Parser;
use tether_harness::load::{self, LoadArgs};

fn main() -> std::process::ExitCode {
    let args = LoadArgs::parse();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(threads) = args.threads {
        runtime.worker_threads(threads.max(1));
    }
    let runtime = runtime.build().expect("a tokio runtime");
    let json = args.json;
    match runtime.block_on(load::run(args)) {
        Ok(report) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).expect("reports serialize")
                );
            } else {
                print!("{}", report.to_text());
            }
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tether-load: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
