//! Lanes (`stream_id`) share one WebSocket-mode connection: a turn on one lane reads its own
//! events, and the other lanes' are kept, in order, for their readers. A connection that never
//! names a lane pays nothing for that: only once a `response.create` with a `stream_id` was sent
//! is a frame's lane looked at. Both backends' `WebSocket` keep their frames here.

use std::collections::VecDeque;

use tether_protocol::ResponseCreate;

use crate::frame::Frame;

/// The frames read for another lane than the one being read, and whether any lane was named.
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    parked: VecDeque<(Option<String>, Frame)>,
    named: bool,
}

impl Lanes {
    /// `request` is being sent: frames must be sorted by lane once one names a lane.
    pub(crate) fn sending(&mut self, request: &ResponseCreate) {
        self.named |= request.stream_id.is_some();
    }

    /// Whether frames are sorted by lane.
    pub(crate) fn named(&self) -> bool {
        self.named
    }

    /// The oldest frame kept, whatever its lane.
    pub(crate) fn any(&mut self) -> Option<Frame> {
        self.parked.pop_front().map(|(_, frame)| frame)
    }

    /// The oldest frame kept for `lane` (`None`: the default lane).
    pub(crate) fn take(&mut self, lane: Option<&str>) -> Option<Frame> {
        let at = self.parked.iter().position(|(l, _)| l.as_deref() == lane)?;
        self.parked.remove(at).map(|(_, frame)| frame)
    }

    /// `frame`, just read, if it is `lane`'s; otherwise it is kept for its own lane's reader.
    pub(crate) fn sort(&mut self, frame: Frame, lane: Option<&str>) -> Option<Frame> {
        let of = frame.lane();
        if of.as_deref() == lane {
            return Some(frame);
        }
        self.parked.push_back((of, frame));
        None
    }

    /// How many frames are kept.
    pub(crate) fn len(&self) -> usize {
        self.parked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(lane: Option<&str>, n: u32) -> Frame {
        let lane = lane.map_or_else(String::new, |l| format!(r#","stream_id":"{l}""#));
        Frame::new(format!(r#"{{"type":"x","sequence_number":{n}{lane}}}"#))
    }

    #[test]
    fn a_connection_without_lanes_sorts_nothing() {
        let mut lanes = Lanes::default();
        lanes.sending(&ResponseCreate::new("m", "x"));
        assert!(!lanes.named());
        let mut laned = ResponseCreate::new("m", "x");
        laned.stream_id = Some("a".into());
        lanes.sending(&laned);
        assert!(lanes.named());
    }

    #[test]
    fn other_lanes_frames_wait_in_order_for_their_readers() {
        let mut lanes = Lanes::default();
        assert_eq!(lanes.sort(on(Some("b"), 1), Some("a")), None);
        assert_eq!(lanes.sort(on(None, 2), Some("a")), None);
        assert_eq!(lanes.sort(on(Some("b"), 3), Some("a")), None);
        assert_eq!(
            lanes.sort(on(Some("a"), 4), Some("a")),
            Some(on(Some("a"), 4))
        );
        assert_eq!(lanes.len(), 3);
        assert_eq!(lanes.take(Some("a")), None);
        assert_eq!(lanes.take(Some("b")), Some(on(Some("b"), 1)));
        assert_eq!(lanes.take(None), Some(on(None, 2)));
        assert_eq!(lanes.any(), Some(on(Some("b"), 3)));
        assert_eq!(lanes.any(), None);
    }
}
