//! One tick, as pure logic over the [`Index`]: read the heads of the queues that changed, then
//! work on the queues that are due, earliest first, one bounded step at a time, until nothing is
//! due or the tick's time budget is spent; then say when the next tick is needed. The server
//! calls (reading heads, promoting, reaping) are the caller's closures.
//!
//! The budget bounds the time a tick holds the main thread: it is checked before each head read
//! and each step, and a step moves at most [`STEP`] ids, so a tick lasts at most the budget plus
//! one step. Work left over goes to the next tick, armed at 0 ms, so clients are served between
//! ticks.

use std::cell::RefCell;
use std::time::Duration;

use super::index::{Index, QueueId, Wake};

/// The time a tick may start new work in.
pub const BUDGET: Duration = Duration::from_micros(250);
/// The most ids one step moves (per set: a step promotes and reaps a queue).
pub const STEP: i64 = 16;
/// How soon after a change the changed queue's heads are read (ms): changes within this window
/// share one read.
pub const DIRTY_MS: u64 = 5;

/// What a tick did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Done {
    /// Queues whose heads were read.
    pub read: usize,
    /// Steps run (a step: one queue's promotion and reaping, bounded).
    pub steps: usize,
    /// Whether the budget ran out with work left.
    pub cut: bool,
}

/// Runs one tick at server time `now` (ms). `elapsed`: the time the tick has taken so far;
/// `heads(queue)`: the queue's due time read from its sets; `step(queue)`: one bounded step of
/// work on a due queue, then its due time. A due time still at or before `now` after a step
/// is recorded as `now`, so other due queues (due earlier) come first.
pub fn run(
    index: &RefCell<Index>,
    now: i64,
    elapsed: impl Fn() -> Duration,
    mut heads: impl FnMut(&QueueId) -> Option<i64>,
    mut step: impl FnMut(&QueueId) -> Option<i64>,
) -> Done {
    let mut done = Done::default();
    let within = || elapsed() < BUDGET;
    while within() {
        let Some(queue) = index.borrow_mut().take_dirty() else {
            break;
        };
        let due = heads(&queue);
        index.borrow_mut().set_due(&queue, due);
        done.read += 1;
    }
    while within() {
        let Some(queue) = index.borrow().first_due(now) else {
            break;
        };
        let due = step(&queue).map(|due| due.max(now));
        index.borrow_mut().set_due(&queue, due);
        done.steps += 1;
    }
    let index = index.borrow();
    done.cut = index.dirty_len() > 0 || index.first_due(now).is_some();
    done
}

/// When to tick next (ms from `now`), given what is left: at once when the budget cut the
/// tick, [`DIRTY_MS`] after a change, at the earliest due time; `None`: no queue needs work.
pub fn delay(now: i64, cut: bool, wake: Option<Wake>) -> Option<u64> {
    if cut {
        return Some(0);
    }
    match wake? {
        Wake::Dirty => Some(DIRTY_MS),
        Wake::At(due) => Some(due.saturating_sub(now).max(0) as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::HashMap;

    /// A fake server: each queue holds `n` due ids; a step moves up to [`STEP`] of them and costs
    /// `step_cost`.
    struct Fake {
        due: RefCell<HashMap<QueueId, i64>>,
        clock: Cell<Duration>,
        step_cost: Duration,
    }

    impl Fake {
        fn step(&self, queue: &QueueId, now: i64) -> Option<i64> {
            self.clock.set(self.clock.get() + self.step_cost);
            let mut due = self.due.borrow_mut();
            let left = due.get_mut(queue).unwrap();
            *left = (*left - STEP).max(0);
            (*left > 0).then_some(now - 1)
        }
    }

    fn q(name: &str) -> QueueId {
        (0, name.as_bytes().into())
    }

    #[test]
    fn ten_thousand_due_ids_take_several_bounded_ticks() {
        let fake = Fake {
            due: RefCell::new(HashMap::from([(q("big"), 10_000)])),
            clock: Cell::new(Duration::ZERO),
            step_cost: Duration::from_micros(100),
        };
        let index = RefCell::new(Index::default());
        index.borrow_mut().touch(0, b"big");
        let now = 1_000;
        let mut ticks = 0;
        let mut longest = Duration::ZERO;
        loop {
            fake.clock.set(Duration::ZERO);
            let done = run(
                &index,
                now,
                || fake.clock.get(),
                |_| Some(now - 5),
                |queue| fake.step(queue, now),
            );
            ticks += 1;
            longest = longest.max(fake.clock.get());
            if !done.cut {
                assert_eq!(delay(now, done.cut, index.borrow().wake_at()), None);
                break;
            }
            assert_eq!(delay(now, done.cut, index.borrow().wake_at()), Some(0));
        }
        assert_eq!(fake.due.borrow()[&q("big")], 0);
        let per_tick = BUDGET.as_micros().div_ceil(fake.step_cost.as_micros()) as usize;
        assert_eq!(
            ticks,
            10_000usize.div_ceil(STEP as usize).div_ceil(per_tick)
        );
        assert!(longest <= BUDGET + fake.step_cost, "{longest:?}");
        assert!(index.borrow().is_empty());
    }

    #[test]
    fn a_backlog_does_not_starve_other_queues() {
        let fake = Fake {
            due: RefCell::new(HashMap::from([(q("big"), 1_000), (q("small"), 1)])),
            clock: Cell::new(Duration::ZERO),
            step_cost: Duration::from_micros(100),
        };
        let index = RefCell::new(Index::default());
        index.borrow_mut().set_due(&q("big"), Some(10));
        index.borrow_mut().set_due(&q("small"), Some(20));
        let mut order = Vec::new();
        run(
            &index,
            100,
            || fake.clock.get(),
            |_| None,
            |queue| {
                order.push(queue.1.to_vec());
                fake.step(queue, 100)
            },
        );
        assert_eq!(order[..2], [b"big".to_vec(), b"small".to_vec()]);
    }

    #[test]
    fn nothing_due_means_no_step_and_a_sleep_to_the_due_time() {
        let index = RefCell::new(Index::default());
        index.borrow_mut().touch(0, b"later");
        let done = run(
            &index,
            1_000,
            || Duration::ZERO,
            |_| Some(1_250),
            |_| unreachable!(),
        );
        assert_eq!(
            done,
            Done {
                read: 1,
                steps: 0,
                cut: false
            }
        );
        assert_eq!(delay(1_000, false, index.borrow().wake_at()), Some(250));
    }

    #[test]
    fn a_spent_budget_leaves_the_rest_to_the_next_tick() {
        let index = RefCell::new(Index::default());
        for name in ["a", "b", "c"] {
            index.borrow_mut().touch(0, name.as_bytes());
        }
        let spent = Cell::new(Duration::ZERO);
        let done = run(
            &index,
            0,
            || spent.get(),
            |_| {
                spent.set(spent.get() + BUDGET);
                Some(100)
            },
            |_| unreachable!(),
        );
        assert_eq!(
            done,
            Done {
                read: 1,
                steps: 0,
                cut: true
            }
        );
        assert_eq!(index.borrow().dirty_len(), 2);
        assert_eq!(delay(0, done.cut, index.borrow().wake_at()), Some(0));
    }

    #[test]
    fn delays() {
        assert_eq!(delay(0, false, None), None);
        assert_eq!(delay(0, true, None), Some(0));
        assert_eq!(delay(10, false, Some(Wake::Dirty)), Some(DIRTY_MS));
        assert_eq!(delay(10, false, Some(Wake::At(25))), Some(15));
        assert_eq!(delay(10, false, Some(Wake::At(5))), Some(0));
    }
}
