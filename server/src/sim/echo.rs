//! The default generator, `echo-tools`: deterministic, so end-to-end and conformance tests can
//! assert on its output. When callable tools are offered (and `tool_choice` is not `none`) and
//! the conversation does not end with a tool output (or `tool_choice` requires a call), it calls
//! the first one `tool_choice` allows (the first two with `parallel_tool_calls: true`, unless a
//! tool is forced) with arguments made from its JSON Schema; otherwise it answers
//! with a text that quotes the user's last message and, after a tool output, what the tool
//! returned.

use super::output::Output;
use super::request::SimRequest;
use crate::model::Context;
use crate::tokenizer;

/// What the echo generator answers in `context`.
pub fn plan(context: &Context) -> Vec<Output> {
    let calls = context.tools_to_call();
    if !calls.is_empty() {
        return calls.into_iter().map(Output::Call).collect();
    }
    let output = context.trailing_tool_output();
    let last = context.last_user_text();
    let text = answer_after(last.as_deref(), output.as_deref());
    match context.sim_output_tokens() {
        Some(count) => vec![Output::Message(exactly(&text, count))],
        None => vec![Output::Message(text)],
    }
}

/// `count` tokens of `text`, repeated as often as needed; concatenated, they still split into
/// exactly `count` tokens.
///
/// Checked without tokenizing the whole result (a 4,000-token answer would cost ~1 ms of each
/// request's time to first token): tokenization is local — pre-tokenized words are encoded on
/// their own and a word never spans a whole copy of the text — so if two copies tokenize as
/// two copies, and one copy followed by the remainder as the two parts, so does every repeat.
pub fn exactly(text: &str, count: usize) -> String {
    let pieces: Vec<(&str, usize)> = tokenizer::pieces(text).collect();
    let per_copy = pieces.len();
    if per_copy > 0 && pieces.iter().all(|(_, n)| *n == 1) {
        let (copies, rest) = (count / per_copy, count % per_copy);
        let remainder: String = pieces[..rest].iter().map(|(piece, _)| *piece).collect();
        let holds = if copies == 0 {
            tokenizer::count(&remainder) == rest
        } else {
            (copies < 2 || tokenizer::count(&text.repeat(2)) == 2 * per_copy)
                && (rest == 0 || tokenizer::count(&format!("{text}{remainder}")) == per_copy + rest)
        };
        if holds {
            return text.repeat(copies) + &remainder;
        }
    }
    " token".repeat(count)
}

/// The answer to a prompt, mentioning the tool output that preceded it, if any.
pub fn answer_after(prompt: Option<&str>, tool_output: Option<&str>) -> String {
    let answer = answer(prompt);
    match tool_output {
        Some(output) => {
            let shown: String = output.chars().take(120).collect();
            let more = if output.chars().count() > 120 {
                "…"
            } else {
                ""
            };
            format!("The tool returned \"{shown}{more}\". {answer}")
        }
        None => answer,
    }
}

/// The answer to a prompt.
pub fn answer(prompt: Option<&str>) -> String {
    let prompt = prompt.map(str::trim).filter(|p| !p.is_empty());
    let quoted = match prompt {
        Some(p) if p.chars().count() > 200 => {
            format!("\"{}…\"", p.chars().take(200).collect::<String>())
        }
        Some(p) => format!("\"{p}\""),
        None => "nothing".to_string(),
    };
    // No second stop after a quote that ends a sentence: `You said: "Hi there." This …`.
    let ended = prompt.is_some_and(|p| p.ends_with(['.', '!', '?']) && p.chars().count() <= 200);
    let stop = if ended { "" } else { "." };
    format!(
        "You said: {quoted}{stop} This answer comes from Tether's inference simulator. Streamed, it \
         arrives as response.output_text.delta events cut at token boundaries and paced by the \
         model's profile; Tether's playground shows its time to first token and its decoding \
         speed in tokens per second."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_quotes_and_truncates_the_prompt() {
        assert!(answer(Some("  hi ")).starts_with("You said: \"hi\"."));
        assert!(answer(None).starts_with("You said: nothing."));
        assert!(answer(Some("Say hello.")).starts_with("You said: \"Say hello.\" This answer"));
        let long = "x".repeat(500);
        assert!(answer(Some(&long)).contains(&format!("\"{}…\"", "x".repeat(200))));
    }

    #[test]
    fn exact_lengths_split_back_into_that_many_tokens() {
        let texts = [
            answer(Some("hello there")),
            answer_after(Some("bench"), Some("ok\n  3 passed; 0 failed")),
            "no full stop at the end".to_string(),
            "Ends with a space ".to_string(),
            "数字 and ünïcödé… mixed".to_string(),
        ];
        for text in &texts {
            for count in [0, 1, 7, 100, 1000, 4001] {
                let exact = exactly(text, count);
                assert_eq!(tokenizer::count(&exact), count, "{text:?} × {count}");
            }
        }
        assert_eq!(exactly("", 3), " token token token");
    }
}
