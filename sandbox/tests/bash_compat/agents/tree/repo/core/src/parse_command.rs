//! Summarises a shell command for the user: a read, a search, a listing or unknown.

use shlex::split as shlex_split;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedCommand {
    Read { cmd: String, name: String },
    ListFiles { cmd: String, path: Option<String> },
    Search { cmd: String, query: Option<String>, path: Option<String> },
    Unknown { cmd: String },
}

pub fn parse_command(command: &[String]) -> Vec<ParsedCommand> {
    let script = match command {
        [bash, flag, script] if bash == "bash" && flag == "-lc" => script.clone(),
        _ => command.join(" "),
    };
    script
        .split("&&")
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(parse_one)
        .collect()
}

fn parse_one(part: &str) -> ParsedCommand {
    let tokens = shlex_split(part).unwrap_or_default();
    let cmd = part.to_string();
    match tokens.first().map(String::as_str) {
        Some("cat") | Some("head") | Some("tail") => ParsedCommand::Read {
            name: tokens.last().cloned().unwrap_or_default(),
            cmd,
        },
        Some("ls") | Some("tree") => ParsedCommand::ListFiles {
            path: tokens.get(1).cloned(),
            cmd,
        },
        Some("rg") | Some("grep") => ParsedCommand::Search {
            query: tokens.get(1).cloned(),
            path: tokens.get(2).cloned(),
            cmd,
        },
        _ => ParsedCommand::Unknown { cmd },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cat_is_a_read() {
        let parsed = parse_command(&v(&["bash", "-lc", "cat README.md"]));
        assert_eq!(
            parsed,
            vec![ParsedCommand::Read { cmd: "cat README.md".into(), name: "README.md".into() }]
        );
    }

    #[test]
    fn rg_is_a_search() {
        let parsed = parse_command(&v(&["rg", "TODO", "src"]));
        assert!(matches!(parsed[0], ParsedCommand::Search { .. }));
    }

    #[test]
    fn unknown_stays_unknown() {
        let parsed = parse_command(&v(&["bash", "-lc", "npm run build"]));
        assert!(matches!(parsed[0], ParsedCommand::Unknown { .. }));
    }
}
