//! Components render state owned elsewhere; they hold no logic worth testing natively.

mod answer;

pub use answer::AnswerView;
