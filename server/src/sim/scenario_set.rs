//! The scenarios a server serves, by name: the ones shipped with it (compiled in from
//! `server/scenarios/`) and those of `--scenarios DIR`, which replace a shipped one of the same
//! name.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::scenario::Scenario;

/// The scenarios shipped with the server, compiled in from `server/scenarios/`.
const BUILTIN: [&str; 2] = [
    include_str!("../../scenarios/fix-sample-project.json"),
    include_str!("../../scenarios/triage-ci-log.json"),
];

/// Scenarios by name.
#[derive(Debug, Clone, Default)]
pub struct ScenarioSet {
    scenarios: BTreeMap<String, Arc<Scenario>>,
}

impl ScenarioSet {
    /// The shipped scenarios.
    pub fn builtin() -> Self {
        let mut set = ScenarioSet::default();
        for text in BUILTIN {
            let scenario = Scenario::from_json(text).expect("shipped scenarios are valid");
            set.insert(scenario);
        }
        set
    }

    /// Adds every `*.json` scenario in `dir` (a scenario of the same name is replaced).
    pub fn load_dir(&mut self, dir: &Path) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut paths: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        paths.sort();
        for path in paths {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let scenario =
                Scenario::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            self.insert(scenario);
        }
        Ok(())
    }

    fn insert(&mut self, scenario: Scenario) {
        self.scenarios
            .insert(scenario.name.clone(), Arc::new(scenario));
    }

    pub fn get(&self, name: &str) -> Option<&Scenario> {
        self.scenarios.get(name).map(Arc::as_ref)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.scenarios.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_scenarios_load() {
        let set = ScenarioSet::builtin();
        assert_eq!(
            set.names().collect::<Vec<_>>(),
            ["fix-sample-project", "triage-ci-log"]
        );
    }
}
