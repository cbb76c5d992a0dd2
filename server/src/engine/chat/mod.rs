//! The Chat Completions dialect (`POST {base}/chat/completions`): what vLLM, SGLang, llama.cpp's
//! server, Ollama and LM Studio all speak. [`request`] builds the request from a response's
//! context, [`stream`] reads its chunks as model events.

pub mod request;
pub mod stream;
