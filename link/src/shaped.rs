//! [`Shaped`]: a socket whose bytes go through the link model — what is read from it arrives
//! as it would have over the link's up direction, what is written to it leaves as it would over
//! the down direction — with a link that can change while the socket is open
//! ([`LinkHandle::apply`]): a server learns a request's conditions only after reading its
//! head, and HTTP keep-alive serves many requests on one socket.
//!
//! - **Reading** (up): bytes read from the socket are stamped when they were read (on loopback,
//!   when the client sent them), scheduled by the up direction's [`Pacer`], and handed to the
//!   reader when due. At most the direction's buffer is held; beyond it the socket is not read,
//!   so the sender's TCP window closes as it would behind a slow link.
//! - **Writing** (down): bytes written are scheduled by the down direction's pacer and queued; a
//!   task writes each segment to the socket when it is due. A write returns once the bytes are
//!   queued (as a kernel socket buffer does), so frames pipeline over the link instead of
//!   waiting a delay each; it waits only when the direction's buffer is full. A shutdown is
//!   delivered after the bytes before it, with the same delay.
//! - **Before a link is known**: bytes read are passed on at once and counted; the next
//!   [`LinkHandle::apply`] charges them as if they had come over the link and says when the
//!   last of them would have arrived, so the caller can wait until then. Every byte of a
//!   request pays the link, its head included. Bytes found already waiting in the socket at
//!   the first read after `apply` (a body nobody read while the server waited for the head)
//!   are taken to have been sent with the head, so they serialise right behind it.
//! - **No link, ever**: until the first `apply` with a link, reads and writes go straight to the
//!   socket: one atomic load and one counter per read.
//!
//! Timers are tokio's, which have millisecond resolution: a delivery can be up to ~1 ms late.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use bytes::{Buf, Bytes};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

use crate::model::{Budget, Direction, LinkConfig, Pacer, read_size};

/// A socket (its read half `R` and write half `W`) shaped by a link.
pub struct Shaped<R, W> {
    reader: R,
    arrivals: Arrivals,
    writer: Writer<W>,
    shared: Arc<Shared>,
}

/// Sets the link of a [`Shaped`] socket and reads its accounts; cheap to clone.
#[derive(Clone)]
pub struct LinkHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for LinkHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkHandle")
            .field("engaged", &self.shared.engaged.load(Ordering::Relaxed))
            .finish()
    }
}

/// What a request's bytes cost on the way up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Upload {
    /// Bytes read through the link since the request began (its head included).
    pub bytes: u64,
    /// How much later its last byte arrived than it would have without the link.
    pub lag: Duration,
}

/// What a response's bytes cost on the way down, up to a message about to be written.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Download {
    /// Bytes written through the link since the request began, the message included.
    pub bytes: u64,
    /// How much later the message's last byte will reach the client than it is written.
    pub lag: Duration,
}

impl<R, W> Shaped<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A socket with no link until [`LinkHandle::apply`] sets one.
    pub fn new(reader: R, writer: W) -> Self {
        Shaped {
            reader,
            arrivals: Arrivals::default(),
            writer: Writer::Direct(writer),
            shared: Arc::new(Shared::new()),
        }
    }

    /// A socket shaped by `link` from its first byte, with `budget` of serialisation time.
    pub fn with_link(reader: R, writer: W, link: LinkConfig, budget: Duration) -> Self {
        let shaped = Shaped::new(reader, writer);
        shaped.handle().apply(Some(link), budget);
        shaped
    }

    /// The handle that sets this socket's link.
    pub fn handle(&self) -> LinkHandle {
        LinkHandle {
            shared: self.shared.clone(),
        }
    }
}

/// State the socket, its handles and its delivery task share.
struct Shared {
    /// Set by the first `apply` with a link; until then the socket is passed straight through.
    engaged: AtomicBool,
    /// Bytes passed on without a link since the last `apply`.
    unshaped_bytes: AtomicU64,
    /// When the first of them was read, in nanoseconds since `born`, plus one (0: none).
    unshaped_since: AtomicU64,
    born: Instant,
    state: Mutex<State>,
    /// Wakes the delivery task: a segment or a shutdown was queued.
    deliver: Notify,
}

#[derive(Default)]
struct State {
    up: Option<Direction>,
    down: Option<Direction>,
    up_pacer: Pacer,
    down_pacer: Pacer,
    budget: Option<Budget>,
    /// When the bytes found already waiting in the socket at the first read after `apply` were
    /// sent: with the request's head (the client sent the request at once; nobody read the
    /// socket while the server waited for the head to arrive). Cleared once the socket is found
    /// empty: later bytes are stamped when they are read.
    waiting_since: Option<Instant>,
    /// Bytes read through the link since the last `apply` or `take_upload`, and the lag of the
    /// last of them.
    up_bytes: u64,
    up_lag: Duration,
    /// Bytes handed to the down direction, ever; and their count when the request began.
    down_bytes: u64,
    down_baseline: u64,
    /// Segments waiting for their due time, and their bytes.
    down_queue: VecDeque<Segment>,
    down_held: usize,
    /// When the shutdown reaches the other end, once asked for.
    fin: Option<Instant>,
    finished: bool,
    failed: Option<io::ErrorKind>,
    /// The writer waiting for room, or for the shutdown to be delivered.
    writer_waker: Option<Waker>,
}

impl Shared {
    fn new() -> Self {
        Shared {
            engaged: AtomicBool::new(false),
            unshaped_bytes: AtomicU64::new(0),
            unshaped_since: AtomicU64::new(0),
            born: Instant::now(),
            state: Mutex::new(State::default()),
            deliver: Notify::new(),
        }
    }

    fn engaged(&self) -> bool {
        self.engaged.load(Ordering::Acquire)
    }

    /// Counts `n` bytes read without a link.
    fn note_unshaped(&self, n: usize) {
        if n > 0 && self.unshaped_bytes.fetch_add(n as u64, Ordering::AcqRel) == 0 {
            let since = Instant::now().saturating_duration_since(self.born);
            self.unshaped_since
                .store(since.as_nanos() as u64 + 1, Ordering::Release);
        }
    }

    /// Takes the count of bytes read without a link, and when the first was read.
    fn take_unshaped(&self) -> (u64, Option<Instant>) {
        let bytes = self.unshaped_bytes.swap(0, Ordering::AcqRel);
        let since = self.unshaped_since.swap(0, Ordering::AcqRel);
        let since = (since > 0).then(|| self.born + Duration::from_nanos(since - 1));
        (bytes, since)
    }
}

impl State {
    fn budget(&mut self) -> &mut Budget {
        self.budget.get_or_insert(Budget::new(Duration::MAX))
    }

    fn wake_writer(&mut self) {
        if let Some(waker) = self.writer_waker.take() {
            waker.wake();
        }
    }
}

impl LinkHandle {
    /// Applies `link` (`None`: no link) to the socket's bytes from now on, with `budget` of
    /// serialisation time for the scope it starts (an HTTP request, a connection).
    ///
    /// Bytes read before it without a link — a request's head, read before its conditions were
    /// known — are charged to the link as if they had come over it: the instant returned is
    /// when the last of them would have arrived (now, if there were none); wait until then
    /// before acting on them. The upload and download accounts start again.
    pub fn apply(&self, link: Option<LinkConfig>, budget: Duration) -> Instant {
        let shared = &self.shared;
        let (bytes, since) = shared.take_unshaped();
        let now = Instant::now();
        let Some(link) = link else {
            if shared.engaged() {
                let mut state = shared.state.lock();
                state.up = None;
                state.down = None;
                state.up_bytes = 0;
                state.up_lag = Duration::ZERO;
                state.down_baseline = state.down_bytes;
            }
            return now;
        };
        shared.engaged.store(true, Ordering::Release);
        let mut state = shared.state.lock();
        state.up = Some(link.up);
        state.down = Some(link.down);
        state.budget = Some(Budget::new(budget));
        state.down_baseline = state.down_bytes;
        state.up_bytes = bytes;
        state.up_lag = Duration::ZERO;
        state.waiting_since = since;
        if bytes == 0 {
            return now;
        }
        let arrived = since.unwrap_or(now);
        let state = &mut *state;
        let due = state.up_pacer.schedule(
            arrived,
            bytes as usize,
            &link.up,
            state.budget.as_mut().expect("set above"),
            |_, _| {},
        );
        state.up_lag = due.saturating_duration_since(arrived);
        due
    }

    /// Ends the current request's upload: bytes read from now on wait for the next `apply`
    /// (over HTTP, the next request's head is charged to that request's own conditions). The
    /// down direction keeps its link: the response is still to be written.
    pub fn end_upload(&self) {
        if self.shared.engaged() {
            self.shared.state.lock().up = None;
        }
    }

    /// The upload since the last `apply` or `take_upload` (what a request's bytes cost), and
    /// starts the download account of its response. `None` without a link.
    pub fn take_upload(&self) -> Option<Upload> {
        if !self.shared.engaged() {
            return None;
        }
        let mut state = self.shared.state.lock();
        state.up?;
        let upload = Upload {
            bytes: std::mem::take(&mut state.up_bytes),
            lag: std::mem::take(&mut state.up_lag),
        };
        state.down_baseline = state.down_bytes;
        Some(upload)
    }

    /// The download of the current response if a message of `pending` bytes is written now:
    /// its bytes so far with the message's, and how much later the message will arrive than
    /// now (the delay, the bytes queued ahead of it, its own serialisation). `None` without a
    /// link.
    pub fn download(&self, pending: usize) -> Option<Download> {
        if !self.shared.engaged() {
            return None;
        }
        let mut state = self.shared.state.lock();
        let link = state.down?;
        let now = Instant::now();
        let budget = *state.budget();
        let due = state.down_pacer.predict(now, pending, &link, &budget);
        Some(Download {
            bytes: state.down_bytes - state.down_baseline + pending as u64,
            lag: due.saturating_duration_since(now),
        })
    }

    /// Whether the scope's serialisation budget is spent (its bandwidth limit lifted).
    pub fn budget_exhausted(&self) -> bool {
        self.shared.engaged()
            && self
                .shared
                .state
                .lock()
                .budget
                .is_some_and(|budget| budget.exhausted())
    }
}

/// A segment on its way: when it is due, how late that is against when it was read, its bytes.
struct Segment {
    due: Instant,
    lag: Duration,
    /// Whether it came over a link (bytes passed on without one are counted apart).
    shaped: bool,
    data: Bytes,
}

/// The read side: segments read from the socket, waiting for their due time.
#[derive(Default)]
struct Arrivals {
    queue: VecDeque<Segment>,
    held: usize,
    /// The socket's end was read; its due time.
    end: Option<Instant>,
    sleep: Option<Pin<Box<Sleep>>>,
    scratch: Vec<u8>,
}

impl<R, W> Shaped<R, W>
where
    R: AsyncRead + Unpin,
{
    /// Reads what the socket has, while the buffer has room, and schedules it.
    fn pull(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while self.arrivals.end.is_none() {
            let capacity = {
                let state = self.shared.state.lock();
                state
                    .up
                    .map_or(Direction::unlimited().buffer_bytes, |d| d.buffer_bytes)
            };
            if self.arrivals.held >= capacity {
                break;
            }
            let size = read_size(capacity).min(capacity - self.arrivals.held);
            self.arrivals.scratch.resize(size, 0);
            let mut buf = ReadBuf::new(&mut self.arrivals.scratch);
            match Pin::new(&mut self.reader).poll_read(cx, &mut buf) {
                Poll::Pending => {
                    self.shared.state.lock().waiting_since = None;
                    break;
                }
                Poll::Ready(Err(error)) => return Err(error),
                Poll::Ready(Ok(())) => {}
            }
            let n = buf.filled().len();
            let mut state = self.shared.state.lock();
            let state = &mut *state;
            let read_at = Instant::now();
            let now = state
                .waiting_since
                .map_or(read_at, |since| since.min(read_at));
            let Some(link) = state.up else {
                if n == 0 {
                    self.arrivals.end = Some(now);
                } else {
                    self.shared.note_unshaped(n);
                    self.arrivals.queue.push_back(Segment {
                        due: now,
                        lag: Duration::ZERO,
                        shaped: false,
                        data: Bytes::copy_from_slice(&self.arrivals.scratch[..n]),
                    });
                    self.arrivals.held += n;
                }
                continue;
            };
            let budget = state.budget.get_or_insert(Budget::new(Duration::MAX));
            if n == 0 {
                let due = state.up_pacer.schedule(now, 0, &link, budget, |_, _| {});
                self.arrivals.end = Some(due);
                break;
            }
            let mut offset = 0;
            let scratch = &self.arrivals.scratch;
            let queue = &mut self.arrivals.queue;
            state.up_pacer.schedule(now, n, &link, budget, |len, due| {
                queue.push_back(Segment {
                    due,
                    lag: due - now,
                    shaped: true,
                    data: Bytes::copy_from_slice(&scratch[offset..offset + len]),
                });
                offset += len;
            });
            self.arrivals.held += n;
        }
        Ok(())
    }

    /// Copies the segments due at `now` into `buf`; the bytes copied.
    fn deliver(&mut self, now: Instant, buf: &mut ReadBuf<'_>) -> usize {
        let mut copied = 0;
        let mut shaped = 0u64;
        let mut lag = None;
        while buf.remaining() > 0 {
            let Some(front) = self.arrivals.queue.front_mut() else {
                break;
            };
            if front.due > now {
                break;
            }
            let n = front.data.len().min(buf.remaining());
            buf.put_slice(&front.data[..n]);
            front.data.advance(n);
            copied += n;
            if front.shaped {
                shaped += n as u64;
                lag = Some(front.lag);
            }
            if front.data.is_empty() {
                self.arrivals.queue.pop_front();
            }
        }
        self.arrivals.held -= copied;
        if shaped > 0 {
            let mut state = self.shared.state.lock();
            state.up_bytes += shaped;
            state.up_lag = lag.unwrap_or_default();
        }
        copied
    }
}

impl<R, W> AsyncRead for Shaped<R, W>
where
    R: AsyncRead + Unpin,
    W: Unpin,
{
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.shared.engaged() {
            let before = buf.filled().len();
            let read = ready!(Pin::new(&mut this.reader).poll_read(cx, buf));
            this.shared.note_unshaped(buf.filled().len() - before);
            return Poll::Ready(read);
        }
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            this.pull(cx)?;
            let now = Instant::now();
            if this.deliver(now, buf) > 0 {
                return Poll::Ready(Ok(()));
            }
            let next = match (this.arrivals.queue.front(), this.arrivals.end) {
                (Some(front), _) => front.due,
                (None, Some(end)) if end <= now => return Poll::Ready(Ok(())),
                (None, Some(end)) => end,
                // Nothing held: the socket was read until it had nothing more (its waker is
                // registered).
                (None, None) => return Poll::Pending,
            };
            let sleep = this
                .arrivals
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(next)));
            sleep.as_mut().reset(next);
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

/// The write side: the socket itself until a link is engaged, then the delivery task's.
enum Writer<W> {
    Direct(W),
    Queued,
    /// Between the two (never seen outside `engage`).
    Moving,
}

impl<R, W> Shaped<R, W>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Hands the socket's write half to a delivery task, once a link is engaged.
    fn engage_writer(&mut self) {
        if let Writer::Direct(_) = self.writer
            && let Writer::Direct(writer) = std::mem::replace(&mut self.writer, Writer::Moving)
        {
            tokio::spawn(deliver(self.shared.clone(), writer));
            self.writer = Writer::Queued;
        }
    }

    /// Queues what `bufs` hold, as much as the down direction has room for.
    fn queue(&mut self, cx: &mut Context<'_>, bufs: &[&[u8]]) -> Poll<io::Result<usize>> {
        let mut state = self.shared.state.lock();
        let state = &mut *state;
        if let Some(kind) = state.failed {
            return Poll::Ready(Err(kind.into()));
        }
        let link = state.down;
        let capacity = link.map_or(Direction::unlimited().buffer_bytes, |d| d.buffer_bytes);
        let mut room = capacity.saturating_sub(state.down_held);
        if room == 0 {
            state.writer_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let now = Instant::now();
        let budget = state.budget.get_or_insert(Budget::new(Duration::MAX));
        let mut written = 0;
        for buf in bufs {
            let buf = &buf[..buf.len().min(room)];
            if buf.is_empty() {
                continue;
            }
            match &link {
                Some(link) => {
                    let mut offset = 0;
                    let queue = &mut state.down_queue;
                    state
                        .down_pacer
                        .schedule(now, buf.len(), link, budget, |len, due| {
                            queue.push_back(Segment {
                                due,
                                lag: due - now,
                                shaped: true,
                                data: Bytes::copy_from_slice(&buf[offset..offset + len]),
                            });
                            offset += len;
                        });
                }
                None => state.down_queue.push_back(Segment {
                    due: now,
                    lag: Duration::ZERO,
                    shaped: false,
                    data: Bytes::copy_from_slice(buf),
                }),
            }
            room -= buf.len();
            written += buf.len();
            if room == 0 {
                break;
            }
        }
        state.down_held += written;
        state.down_bytes += written as u64;
        self.shared.deliver.notify_one();
        Poll::Ready(Ok(written))
    }
}

impl<R, W> AsyncWrite for Shaped<R, W>
where
    R: Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Writer::Direct(writer) = &mut this.writer {
            if !this.shared.engaged() {
                return Pin::new(writer).poll_write(cx, buf);
            }
            this.engage_writer();
        }
        this.queue(cx, &[buf])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Writer::Direct(writer) = &mut this.writer {
            if !this.shared.engaged() {
                return Pin::new(writer).poll_write_vectored(cx, bufs);
            }
            this.engage_writer();
        }
        let slices: Vec<&[u8]> = bufs.iter().map(|b| &**b).collect();
        this.queue(cx, &slices)
    }

    fn is_write_vectored(&self) -> bool {
        match &self.writer {
            Writer::Direct(writer) => writer.is_write_vectored(),
            Writer::Queued | Writer::Moving => true,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match &mut this.writer {
            Writer::Direct(writer) => Pin::new(writer).poll_flush(cx),
            // Queued bytes are on the link: the delivery task writes them when due.
            Writer::Queued | Writer::Moving => match this.shared.state.lock().failed {
                Some(kind) => Poll::Ready(Err(kind.into())),
                None => Poll::Ready(Ok(())),
            },
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match &mut this.writer {
            Writer::Direct(writer) => Pin::new(writer).poll_shutdown(cx),
            Writer::Queued | Writer::Moving => {
                let mut state = this.shared.state.lock();
                if state.finished {
                    return Poll::Ready(match state.failed {
                        Some(kind) => Err(kind.into()),
                        None => Ok(()),
                    });
                }
                ask_fin(&mut state);
                state.writer_waker = Some(cx.waker().clone());
                this.shared.deliver.notify_one();
                Poll::Pending
            }
        }
    }
}

impl<R, W> Drop for Shaped<R, W> {
    fn drop(&mut self) {
        // The delivery task delivers what is queued, then closes the socket.
        if let Writer::Queued = self.writer {
            ask_fin(&mut self.shared.state.lock());
            self.shared.deliver.notify_one();
        }
    }
}

/// Asks for the shutdown to be delivered after the bytes queued, with the down delay.
fn ask_fin(state: &mut State) {
    if state.fin.is_none() {
        let now = Instant::now();
        let link = state.down.unwrap_or_else(Direction::unlimited);
        let budget = *state.budget();
        state.fin = Some(state.down_pacer.predict(now, 0, &link, &budget));
    }
}

/// The delivery task of a shaped socket's down direction: writes each segment when it is due
/// (all that are due in one write), then the shutdown.
async fn deliver<W: AsyncWrite + Unpin>(shared: Arc<Shared>, mut to: W) {
    enum Next {
        Data(Instant),
        Fin(Instant),
    }
    let mut out = Vec::new();
    loop {
        let next = loop {
            let notified = shared.deliver.notified();
            {
                let state = shared.state.lock();
                if let Some(front) = state.down_queue.front() {
                    break Next::Data(front.due);
                }
                if let Some(fin) = state.fin {
                    break Next::Fin(fin);
                }
            }
            notified.await;
        };
        let result = match next {
            Next::Data(due) => {
                tokio::time::sleep_until(due).await;
                out.clear();
                {
                    let mut state = shared.state.lock();
                    let now = Instant::now();
                    while let Some(front) = state.down_queue.front() {
                        if front.due > now {
                            break;
                        }
                        let segment = state.down_queue.pop_front().expect("front exists");
                        out.extend_from_slice(&segment.data);
                    }
                }
                let written = to.write_all(&out).await;
                let mut state = shared.state.lock();
                state.down_held -= out.len();
                state.wake_writer();
                written
            }
            Next::Fin(due) => {
                tokio::time::sleep_until(due).await;
                let closed = to.shutdown().await;
                let mut state = shared.state.lock();
                state.finished = true;
                if let Err(error) = &closed {
                    state.failed = Some(error.kind());
                }
                state.wake_writer();
                return;
            }
        };
        if let Err(error) = result {
            let mut state = shared.state.lock();
            state.failed = Some(error.kind());
            state.finished = true;
            state.down_queue.clear();
            state.down_held = 0;
            state.wake_writer();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The server's side of a link, on tokio's paused clock: what a socket's reader and writer
    //! see when the link is set after the request's head was read, changed between requests,
    //! or never set.

    use super::*;
    use tokio::io::{AsyncReadExt, DuplexStream, ReadHalf, WriteHalf, duplex};

    type ServerSide = Shaped<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;

    /// A shaped server end and the client's end of one socket.
    fn socket() -> (ServerSide, DuplexStream) {
        let (client, server) = duplex(1 << 20);
        let (read, write) = tokio::io::split(server);
        (Shaped::new(read, write), client)
    }

    fn link(rtt_ms: u64, up_mbit: Option<f64>, down_mbit: Option<f64>) -> LinkConfig {
        LinkConfig::new(Duration::from_millis(rtt_ms), up_mbit, down_mbit, None)
    }

    const BUDGET: Duration = Duration::from_secs(120);

    #[tokio::test(start_paused = true)]
    async fn a_socket_never_linked_passes_its_bytes_straight_through() {
        let (mut server, mut client) = socket();
        let started = Instant::now();
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        let mut head = [0u8; 18];
        server.read_exact(&mut head).await.unwrap();
        server.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await.unwrap();
        let mut answer = [0u8; 19];
        client.read_exact(&mut answer).await.unwrap();
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert!(
            matches!(server.writer, Writer::Direct(_)),
            "no delivery task"
        );
        let handle = server.handle();
        assert_eq!(handle.take_upload(), None);
        assert_eq!(handle.download(100), None);
        // The bytes were counted for a link that might still come.
        assert_eq!(handle.shared.take_unshaped().0, 18);
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_read_before_the_link_is_known_is_charged_when_it_is() {
        let (mut server, mut client) = socket();
        let handle = server.handle();
        // 1,000 bytes of head, then 100,000 of body, all sent at once (loopback).
        let body = vec![7u8; 100_000];
        client.write_all(&[1u8; 1000]).await.unwrap();
        client.write_all(&body).await.unwrap();
        let started = Instant::now();
        let mut head = [0u8; 1000];
        server.read_exact(&mut head).await.unwrap();
        // The head (and whatever the read took with it) came at once: no link yet. 40 ms RTT,
        // 8 Mbit/s up (1,000,000 bytes/s).
        let arrived = handle.apply(Some(link(40, Some(8.0), None)), BUDGET);
        let unshaped = handle.take_upload().unwrap();
        assert_eq!(unshaped.bytes, 1000, "exactly the bytes read before");
        // 1,000 bytes in 1 ms, then 20 ms of delay.
        assert_eq!(arrived - started, Duration::from_millis(21));
        assert_eq!(unshaped.lag, Duration::from_millis(21));
        tokio::time::sleep_until(arrived).await;
        let mut received = vec![0u8; body.len()];
        server.read_exact(&mut received).await.unwrap();
        assert_eq!(received, body);
        // The body serialises after the head: 100 ms more.
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(121) && elapsed <= Duration::from_millis(123),
            "{elapsed:?}"
        );
        let upload = handle.take_upload().unwrap();
        assert_eq!(upload.bytes, 100_000);
        // Its last byte was read at the start and delivered 121 ms later.
        assert_eq!(upload.lag, Duration::from_millis(121));
    }

    #[tokio::test(start_paused = true)]
    async fn each_request_on_a_kept_alive_socket_pays_its_own_conditions() {
        let (mut server, mut client) = socket();
        let handle = server.handle();
        let mut head = [0u8; 100];
        // Request 1 asks for a 100 ms RTT.
        client.write_all(&[1u8; 100]).await.unwrap();
        server.read_exact(&mut head).await.unwrap();
        let started = Instant::now();
        let arrived = handle.apply(Some(link(100, None, None)), BUDGET);
        assert_eq!(arrived - started, Duration::from_millis(50));
        tokio::time::sleep_until(arrived).await;
        handle.end_upload();
        server.write_all(&[2u8; 10]).await.unwrap();
        let mut answer = [0u8; 10];
        client.read_exact(&mut answer).await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_millis(100), "one RTT");
        // Request 2 asks for none: its head is not held back by request 1's link, and neither
        // is its answer.
        let second = Instant::now();
        client.write_all(&[3u8; 100]).await.unwrap();
        server.read_exact(&mut head).await.unwrap();
        assert_eq!(head, [3u8; 100]);
        assert_eq!(handle.apply(None, BUDGET), second);
        server.write_all(&[4u8; 10]).await.unwrap();
        client.read_exact(&mut answer).await.unwrap();
        assert_eq!(answer, [4u8; 10]);
        assert_eq!(second.elapsed(), Duration::ZERO);
        assert_eq!(handle.take_upload(), None, "no link, no account");
    }

    #[tokio::test(start_paused = true)]
    async fn the_download_account_says_when_a_message_will_arrive() {
        let (mut server, mut client) = socket();
        let handle = server.handle();
        handle.apply(Some(link(40, None, Some(8.0))), BUDGET);
        let started = Instant::now();
        // 10,000 bytes of events: 10 ms on the link.
        server.write_all(&[5u8; 10_000]).await.unwrap();
        // A 2,000-byte terminal message written now waits for them, serialises in 2 ms, then
        // travels 20 ms.
        let download = handle.download(2_000).unwrap();
        assert_eq!(download.bytes, 12_000);
        assert_eq!(download.lag, Duration::from_millis(32));
        server.write_all(&[6u8; 2_000]).await.unwrap();
        let mut received = vec![0u8; 12_000];
        client.read_exact(&mut received).await.unwrap();
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(32) && elapsed <= Duration::from_millis(33),
            "{elapsed:?}"
        );
        assert_eq!(&received[10_000..], &[6u8; 2_000]);
        // A shutdown arrives after the bytes, with the delay.
        server.shutdown().await.unwrap();
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_spent_budget_lifts_the_bandwidth_and_says_so() {
        let (mut server, mut client) = socket();
        let handle = server.handle();
        // 1 Mbit/s down (125,000 bytes/s) with 10 ms of serialisation allowed.
        handle.apply(Some(link(20, None, Some(1.0))), Duration::from_millis(10));
        let started = Instant::now();
        server.write_all(&vec![9u8; 125_000]).await.unwrap();
        let mut received = vec![0u8; 125_000];
        client.read_exact(&mut received).await.unwrap();
        // A second at the asked bandwidth; ~11.6 ms (the budget, rounded up to a segment) and
        // the delay once the budget is spent.
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(21) && elapsed <= Duration::from_millis(23),
            "{elapsed:?}"
        );
        assert!(handle.budget_exhausted());
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_closes_the_window_instead_of_growing_the_buffer() {
        let (mut server, mut client) = socket();
        // 64 KiB held at most, 1 Mbit/s up.
        let config = LinkConfig::new(Duration::from_millis(10), Some(1.0), None, Some(64 << 10));
        server.handle().apply(Some(config), BUDGET);
        client.write_all(&vec![1u8; 512 << 10]).await.unwrap();
        let mut first = [0u8; 1];
        server.read_exact(&mut first).await.unwrap();
        assert!(
            server.arrivals.held <= 64 << 10,
            "held {}",
            server.arrivals.held
        );
    }
}
