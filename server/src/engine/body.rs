//! A request body made of several shared buffers, sent with a `Content-Length` and without
//! being copied into one: the serialized conversation kept from the previous request
//! ([`super::prefix`]) goes out as it is, next to the few bytes this request added.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// A body of `parts`, in order.
#[derive(Debug, Clone, Default)]
pub struct Parts {
    parts: VecDeque<Bytes>,
    remaining: u64,
}

impl Parts {
    pub fn new(parts: Vec<Bytes>) -> Self {
        let remaining = parts.iter().map(|p| p.len() as u64).sum();
        Parts {
            parts: parts.into_iter().filter(|p| !p.is_empty()).collect(),
            remaining,
        }
    }

    /// Its bytes in one buffer (to record it, or to read it as JSON).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.remaining as usize);
        for part in &self.parts {
            out.extend_from_slice(part);
        }
        out
    }

    pub fn len(&self) -> u64 {
        self.remaining
    }

    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }
}

impl Body for Parts {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.parts.pop_front().map(|part| {
            self.remaining -= part.len() as u64;
            Ok(Frame::data(part))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn the_parts_arrive_in_order_with_their_length_known() {
        let body = Parts::new(vec![
            Bytes::from_static(b"{\"a\":"),
            Bytes::new(),
            Bytes::from_static(b"1}"),
        ]);
        assert_eq!(body.size_hint().exact(), Some(7));
        assert_eq!(body.to_vec(), b"{\"a\":1}");
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(&collected[..], b"{\"a\":1}");
    }
}
