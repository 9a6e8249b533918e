//! Server-side timers: the module promotes due jobs and reaps expired leases by itself, on a
//! primary, with no worker running (docs/architecture.md, "Server-side timers").
//!
//! * **Which queues**: an in-memory [`Index`] per node, fed by the keyspace notifications of every
//!   `emq:{q}:schedule` / `emq:{q}:active` key ([`changed`]: a verb's write, a plain command, the
//!   replication stream on a replica, an AOF replay, each key of an RDB load), so a replica
//!   keeps its index and a new primary has it at once. A notification marks the queue *dirty*;
//!   the next tick reads the heads of its two sets and files the queue under its next due time.
//! * **When**: one module timer per node, armed at the earliest due time (or [`DIRTY_MS`] after
//!   a change); a tick that finds nothing due does nothing and arms nothing.
//! * **Work**: bounded per tick ([`tick::BUDGET`], steps of [`STEP`] ids), through the very code
//!   `EMQ.PROMOTE` and `EMQ.REAP` run ([`work`]); the writes replicate as plain commands, wrapped
//!   in one `MULTI/EXEC` per tick by the server.
//! * **Where**: a primary that is not loading. A replica keeps the index and never ticks; the
//!   role-change and loading-ended server events re-read every queue and arm the timer.
//! * **Switch**: the module config `echomq.timers` (`yes` by default; `--loadmodule … timers no`,
//!   `CONFIG SET echomq.timers no`): off, the index is still kept but no tick runs, and
//!   `EMQ.VERSION` no longer lists the `timers` feature. Turned on, the next server cron (≤ 100 ms)
//!   re-reads every queue and arms the timer; the cron also re-arms a timer that should be armed
//!   and is not (a safety net that costs one check per cron).
//! * **Seen**: `INFO echomq` (section `echomq_timers`): ticks, the longest and last tick in µs
//!   (wall time, and the server thread's CPU time), ids moved, queues known.

mod config;
pub mod index;
pub mod slots;
pub mod tick;
mod unsettled;
pub mod work;

use std::cell::{OnceCell, RefCell};
use std::time::{Duration, Instant};

use linkme::distributed_slice;
use valkey_module::raw::RedisModuleTimerID;
use valkey_module::server_events::{LoadingSubevent, ServerRole};
use valkey_module::{Context, ContextFlags, InfoContext, KeysCursor, NotifyEvent, ValkeyResult};

use crate::clock;
use crate::direct;
use crate::keyspace::Queue;

pub use config::{configure, enabled};
pub use index::Index;
pub use tick::{DIRTY_MS, STEP};
use unsettled::Unsettled;
use work::Moved;

/// What the timers did since load (`INFO echomq`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub ticks: u64,
    /// Wall time of the longest and the last tick (what clients waited, the OS's preemptions
    /// included).
    pub longest_tick_us: u64,
    pub last_tick_us: u64,
    /// The server thread's CPU time of the longest and the last tick (the tick's own work).
    pub longest_tick_cpu_us: u64,
    pub last_tick_cpu_us: u64,
    pub promoted: u64,
    pub requeued: u64,
    pub buried: u64,
    /// Queues the timers gave up on (not branded for wire 6, a key of another type).
    pub refused: u64,
}

impl Stats {
    fn record(&mut self, spent: Duration, cpu_us: i64, moved: Moved) {
        let us = spent.as_micros() as u64;
        let cpu_us = cpu_us.max(0) as u64;
        self.ticks += 1;
        self.last_tick_us = us;
        self.longest_tick_us = self.longest_tick_us.max(us);
        self.last_tick_cpu_us = cpu_us;
        self.longest_tick_cpu_us = self.longest_tick_cpu_us.max(cpu_us);
        self.promoted += moved.promoted as u64;
        self.requeued += moved.requeued as u64;
        self.buried += moved.buried as u64;
    }
}

/// The node's timer state.
#[derive(Default)]
struct State {
    primary: bool,
    loading: bool,
    /// The armed timer and when it fires (server time ms).
    armed: Option<(RedisModuleTimerID, i64)>,
    /// Whether the last cron saw the timers switched on.
    was_enabled: bool,
    stats: Stats,
}

thread_local! {
    // Everything here runs on the server's main thread.
    static INDEX: RefCell<Index> = RefCell::new(Index::default());
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Whether a node in state `flags` runs timers: a primary that is not loading.
pub fn runs(flags: ContextFlags) -> bool {
    !flags.intersects(ContextFlags::SLAVE | ContextFlags::LOADING)
}

/// Module load: the node's role now, and the queues of database 0 when the module is loaded
/// into a running server with data (at startup the load that follows feeds the index).
pub fn init(ctx: &Context) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.primary = !ctx.get_flags().contains(ContextFlags::SLAVE);
        s.was_enabled = enabled();
    });
    let cursor = KeysCursor::new();
    let found = |_: &Context,
                 name: valkey_module::ValkeyString,
                 _: Option<&valkey_module::key::ValkeyKey>| {
        if let Some(queue) = Queue::of_timed_key(name.as_slice()) {
            INDEX.with(|index| index.borrow_mut().touch(0, queue.name()));
        }
    };
    while cursor.scan(ctx, &found) {}
    if INDEX.with(|index| !index.borrow().is_empty()) {
        arm_if_running(ctx, 0);
    }
}

/// Whether a keyspace event can bring a due time earlier: anything but a removal (a removal
/// only makes the next due time later; the stale earlier one costs one empty look).
pub fn may_bring_earlier(event: &str) -> bool {
    const REMOVALS: [&str; 7] = [
        "zrem",
        "zpop",
        "del",
        "expired",
        "evicted",
        "rename_from",
        "move_from",
    ];
    !REMOVALS.iter().any(|removal| event.starts_with(removal))
}

/// The keyspace notification hook (sorted-set, generic and loaded events): a write to a queue's
/// `schedule` or `active` marks the queue dirty and, on a running primary, arms the timer.
pub fn changed(ctx: &Context, _class: NotifyEvent, event: &str, key: &[u8]) {
    let Some(queue) = Queue::of_timed_key(key) else {
        return;
    };
    if !may_bring_earlier(event) {
        return;
    }
    let db = direct::selected_db(ctx);
    if INDEX.with(|index| index.borrow_mut().touch(db, queue.name())) {
        arm_if_running(ctx, DIRTY_MS);
    }
}

#[distributed_slice(valkey_module::server_events::ROLE_CHANGED_SERVER_EVENTS_LIST)]
fn role_changed(ctx: &Context, role: ServerRole) {
    let primary = role == ServerRole::Primary;
    STATE.with(|s| s.borrow_mut().primary = primary);
    if primary {
        INDEX.with(|index| index.borrow_mut().touch_all());
        arm_if_running(ctx, 0);
    } else {
        disarm(ctx);
    }
}

#[distributed_slice(valkey_module::server_events::LOADING_SERVER_EVENTS_LIST)]
fn loading(ctx: &Context, event: LoadingSubevent) {
    let loading = !matches!(event, LoadingSubevent::Ended | LoadingSubevent::Failed);
    STATE.with(|s| s.borrow_mut().loading = loading);
    if loading {
        disarm(ctx);
    } else {
        INDEX.with(|index| index.borrow_mut().touch_all());
        arm_if_running(ctx, 0);
    }
}

/// The server cron (`hz`, 10 a second by default): when the timers were just switched on, every
/// queue is read again; a running primary with work known and no timer armed gets one.
#[distributed_slice(valkey_module::server_events::CRON_SERVER_EVENTS_LIST)]
fn cron(ctx: &Context, _hz: u64) {
    let on = enabled();
    let (switched_on, idle) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let switched_on = on && !s.was_enabled;
        s.was_enabled = on;
        (switched_on, s.armed.is_none())
    });
    if switched_on {
        INDEX.with(|index| index.borrow_mut().touch_all());
    }
    if !on || !idle {
        return;
    }
    let wake = INDEX.with(|index| index.borrow().wake_at());
    if let Some(delay) = tick::delay(clock::now_ms(), false, wake) {
        arm_if_running(ctx, delay);
    }
}

#[distributed_slice(valkey_module::server_events::INFO_COMMAND_HANDLER_LIST)]
fn info(ctx: &InfoContext, _for_crash_report: bool) -> ValkeyResult<()> {
    let (running, stats) = STATE.with(|s| {
        let s = s.borrow();
        (enabled() && s.primary && !s.loading, s.stats)
    });
    let (queues, dirty) = INDEX.with(|index| {
        let index = index.borrow();
        (index.len(), index.dirty_len())
    });
    let fields = [
        ("timers_enabled", i64::from(enabled())),
        ("timers_running", i64::from(running)),
        ("timers_queues", queues as i64),
        ("timers_dirty", dirty as i64),
        ("timers_ticks", stats.ticks as i64),
        ("timers_longest_tick_us", stats.longest_tick_us as i64),
        ("timers_last_tick_us", stats.last_tick_us as i64),
        (
            "timers_longest_tick_cpu_us",
            stats.longest_tick_cpu_us as i64,
        ),
        ("timers_last_tick_cpu_us", stats.last_tick_cpu_us as i64),
        ("timers_promoted", stats.promoted as i64),
        ("timers_requeued", stats.requeued as i64),
        ("timers_buried", stats.buried as i64),
        ("timers_refused", stats.refused as i64),
    ];
    let mut section = ctx.builder().add_section("timers");
    for (name, value) in fields {
        section = section.field(name, value)?;
    }
    section.build_section()?.build_info().map(drop)
}

/// The timers' counters now.
pub fn stats() -> Stats {
    STATE.with(|s| s.borrow().stats)
}

/// Arms the timer `delay_ms` from now on a running primary, unless it fires sooner already.
fn arm_if_running(ctx: &Context, delay_ms: u64) {
    let at = clock::now_ms().saturating_add(delay_ms as i64);
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if !s.primary || s.loading || !enabled() {
            return;
        }
        if let Some((id, when)) = s.armed {
            if when <= at {
                return;
            }
            let _ = ctx.stop_timer::<()>(id);
        }
        let id = ctx.create_timer(Duration::from_millis(delay_ms), fire, ());
        s.armed = Some((id, at));
    });
}

/// Stops the armed timer, if any.
fn disarm(ctx: &Context) {
    if let Some((id, _)) = STATE.with(|s| s.borrow_mut().armed.take()) {
        let _ = ctx.stop_timer::<()>(id);
    }
}

/// How long a queue whose slot is moving waits before the timers look at it again (ms).
pub const MOVING_RETRY_MS: i64 = 100;

/// One tick: on a running primary, the work [`tick::run`] plans, through [`work`]; then the
/// timer armed for what is left. On a cluster node a queue whose slot is moving, or is not
/// this node's, waits ([`slots`]).
fn fire(ctx: &Context, _: ()) {
    STATE.with(|s| s.borrow_mut().armed = None);
    let flags = ctx.get_flags();
    let cluster = flags.contains(ContextFlags::CLUSTER);
    if !enabled() || !runs(flags) {
        return;
    }
    let unsettled = OnceCell::new();
    let started = Instant::now();
    let cpu = direct::thread_cpu_micros();
    let now = clock::now_ms();
    let mut moved = Moved::default();
    let mut refused = Vec::new();
    let done = INDEX.with(|index| {
        tick::run(
            index,
            now,
            || started.elapsed(),
            |queue| work::heads(ctx, queue),
            |queue| {
                if cluster {
                    let unsettled = unsettled.get_or_init(|| Unsettled::read(ctx));
                    let slot = slots::queue_slot(&queue.1);
                    if unsettled.moving(slot) {
                        return Some(now + MOVING_RETRY_MS);
                    }
                    if unsettled.foreign(slot) {
                        // kept while its keys are here (arriving, or left until trimmed)
                        return work::heads(ctx, queue).map(|_| now + MOVING_RETRY_MS);
                    }
                }
                match work::step(ctx, queue, STEP) {
                    Ok((step, due)) => {
                        moved.promoted += step.promoted;
                        moved.requeued += step.requeued;
                        moved.buried += step.buried;
                        due
                    }
                    Err(refusal) => {
                        refused.push((queue.1.clone(), refusal));
                        None
                    }
                }
            },
        )
    });
    let spent = started.elapsed();
    let cpu = direct::thread_cpu_micros() - cpu;
    let count = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.stats.record(spent, cpu, moved);
        s.stats.refused += refused.len() as u64;
        s.stats.refused
    });
    for (name, refusal) in refused {
        if count <= 10 || count.is_multiple_of(1000) {
            let (name, line) = (
                String::from_utf8_lossy(&name),
                String::from_utf8_lossy(refusal.as_bytes()),
            );
            ctx.log_warning(&format!("echomq timers: queue {name} left alone: {line}"));
        }
    }
    let wake = INDEX.with(|index| index.borrow().wake_at());
    if let Some(delay) = tick::delay(now, done.cut, wake) {
        arm_if_running(ctx, delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removals_do_not_wake_the_timers() {
        for event in [
            "zadd",
            "zincr",
            "zunionstore",
            "restore",
            "rename_to",
            "loaded",
            "copy_to",
            "move_to",
        ] {
            assert!(may_bring_earlier(event), "{event}");
        }
        for event in [
            "zrem",
            "zrembyscore",
            "zremrangebylex",
            "zpopmin",
            "del",
            "expired",
            "evicted",
            "rename_from",
        ] {
            assert!(!may_bring_earlier(event), "{event}");
        }
    }

    #[test]
    fn only_a_primary_that_is_not_loading_runs() {
        assert!(runs(ContextFlags::MASTER));
        assert!(!runs(ContextFlags::SLAVE));
        assert!(!runs(ContextFlags::MASTER | ContextFlags::LOADING));
    }

    #[test]
    fn stats_keep_the_longest_tick() {
        let mut stats = Stats::default();
        let moved = Moved {
            promoted: 3,
            requeued: 1,
            buried: 0,
        };
        stats.record(Duration::from_micros(700), 300, moved);
        stats.record(Duration::from_micros(200), 150, moved);
        assert_eq!(
            (stats.ticks, stats.longest_tick_us, stats.last_tick_us),
            (2, 700, 200)
        );
        assert_eq!(
            (stats.longest_tick_cpu_us, stats.last_tick_cpu_us),
            (300, 150)
        );
        assert_eq!((stats.promoted, stats.requeued), (6, 2));
    }
}
