use agent_core::run_agent;

fn main() -> anyhow::Result<()> {
    let task = std::env::args().nth(1).unwrap_or_default();
    for turn in run_agent(&task, 40)? {
        println!("{:>3} {}", turn.index, turn.command.join(" "));
    }
    Ok(())
}
