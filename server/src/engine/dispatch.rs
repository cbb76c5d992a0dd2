//! Which engine serves a request: the one its `model` is configured for (`--engine-model`, an
//! `--engine-config` entry with `models`), else the default one — the engine of `--engine`, or
//! the simulator when there is none.

use std::collections::HashMap;
use std::sync::Arc;

use tether_protocol::{ApiError, ResponseCreate};

use crate::model::{Context, Model, ModelStream};

/// Engines by model name, and the default one.
pub struct Dispatch {
    named: HashMap<String, Arc<dyn Model>>,
    default: Arc<dyn Model>,
    /// Every engine, for readiness.
    engines: Vec<Arc<dyn Model>>,
}

impl Dispatch {
    /// `named` engines by model, `default` for every other model; `engines` are all the
    /// configured engines (the simulator not among them).
    pub fn new(
        named: HashMap<String, Arc<dyn Model>>,
        default: Arc<dyn Model>,
        engines: Vec<Arc<dyn Model>>,
    ) -> Self {
        Dispatch {
            named,
            default,
            engines,
        }
    }

    fn pick(&self, model: &str) -> &Arc<dyn Model> {
        self.named.get(model).unwrap_or(&self.default)
    }
}

impl Model for Dispatch {
    fn generate(&self, context: &Context) -> ModelStream {
        self.pick(&context.request.model).generate(context)
    }

    fn model_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.named.keys().cloned().collect();
        ids.sort();
        for id in self.default.model_ids() {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    fn serves(&self, model: &str) -> bool {
        self.named.contains_key(model) || self.default.serves(model)
    }

    /// The default model's: the simulator's, when no `--engine` replaces it.
    fn scenario_names(&self) -> Option<Vec<String>> {
        self.default.scenario_names()
    }

    fn check(&self, request: &ResponseCreate) -> Result<(), ApiError> {
        self.pick(&request.model).check(request)
    }

    fn real_engine(&self, model: &str) -> bool {
        self.pick(model).real_engine(model)
    }

    fn readiness(&self) -> Result<(), String> {
        let problems: Vec<String> = self
            .engines
            .iter()
            .filter_map(|engine| engine.readiness().err())
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}
