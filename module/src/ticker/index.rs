//! The timers' index of this node's queues (pure bookkeeping, no server calls): for each queue
//! that has a `schedule` or an `active` set, when it next needs work (`due`, server time ms), and
//! whether its sets changed since that was read (`dirty`: the next tick reads the heads again).
//!
//! Queues enter through the keyspace notifications of their `schedule`/`active` keys (every
//! write, by a verb, a plain command, the replication stream, an AOF or RDB load) and leave when
//! a tick finds both sets empty. A tick asks [`Index::first_due`] for the queue due first,
//! works on it and records its new due time; [`Index::wake_at`] says when the next tick is
//! needed, so a tick does nothing when nothing is due.

use std::collections::{BTreeSet, HashMap, VecDeque};

/// A queue on this node: its database and its name.
pub type QueueId = (i32, Box<[u8]>);

#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    due: Option<i64>,
    dirty: bool,
}

/// When the next tick is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Some queue changed: read its heads soon.
    Dirty,
    /// The earliest due time (ms).
    At(i64),
}

/// The queues and their due times.
#[derive(Debug, Default)]
pub struct Index {
    /// Per database, per queue name (looked up by a borrowed name: a notification for a queue
    /// already dirty allocates nothing).
    entries: HashMap<i32, HashMap<Box<[u8]>, Entry>>,
    len: usize,
    by_due: BTreeSet<(i64, QueueId)>,
    dirty: VecDeque<QueueId>,
}

impl Index {
    /// How many queues are known.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no queue is known.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many queues wait for their heads to be read.
    pub fn dirty_len(&self) -> usize {
        self.dirty.len()
    }

    fn entry(&mut self, id: &QueueId) -> Option<&mut Entry> {
        self.entries.get_mut(&id.0)?.get_mut(&id.1)
    }

    /// Queue `name` of database `db` changed: its heads are read at the next tick. `true` when
    /// it was not dirty yet (the caller may arm the timer).
    pub fn touch(&mut self, db: i32, name: &[u8]) -> bool {
        let queues = self.entries.entry(db).or_default();
        match queues.get_mut(name) {
            Some(entry) if entry.dirty => return false,
            Some(entry) => entry.dirty = true,
            None => {
                queues.insert(
                    name.into(),
                    Entry {
                        due: None,
                        dirty: true,
                    },
                );
                self.len += 1;
            }
        }
        self.dirty.push_back((db, name.into()));
        true
    }

    /// Every known queue is dirty (after a load or on becoming primary).
    pub fn touch_all(&mut self) {
        for (db, queues) in self.entries.iter_mut() {
            for (name, entry) in queues.iter_mut() {
                if !entry.dirty {
                    entry.dirty = true;
                    self.dirty.push_back((*db, name.clone()));
                }
            }
        }
    }

    /// The next dirty queue, no longer dirty (its heads are about to be read).
    pub fn take_dirty(&mut self) -> Option<QueueId> {
        let id = self.dirty.pop_front()?;
        if let Some(entry) = self.entry(&id) {
            entry.dirty = false;
        }
        Some(id)
    }

    /// Records when `id` next needs work; `None`: never (both sets empty) — the queue is
    /// forgotten unless it was touched again meanwhile.
    pub fn set_due(&mut self, id: &QueueId, due: Option<i64>) {
        let Some(entry) = self.entry(id) else {
            if let Some(due) = due {
                let queues = self.entries.entry(id.0).or_default();
                queues.insert(
                    id.1.clone(),
                    Entry {
                        due: Some(due),
                        dirty: false,
                    },
                );
                self.len += 1;
                self.by_due.insert((due, id.clone()));
            }
            return;
        };
        let (old, dirty) = (entry.due, entry.dirty);
        entry.due = due;
        if old != due {
            if let Some(old) = old {
                self.by_due.remove(&(old, id.clone()));
            }
            if let Some(due) = due {
                self.by_due.insert((due, id.clone()));
            }
        }
        if due.is_none() && !dirty {
            self.forget(id);
        }
    }

    fn forget(&mut self, id: &QueueId) {
        if let Some(queues) = self.entries.get_mut(&id.0) {
            if queues.remove(&id.1).is_some() {
                self.len -= 1;
            }
            if queues.is_empty() {
                self.entries.remove(&id.0);
            }
        }
    }

    /// The queue due first, when it is due at `now` or before.
    pub fn first_due(&self, now: i64) -> Option<QueueId> {
        self.by_due
            .first()
            .filter(|(due, _)| *due <= now)
            .map(|(_, id)| id.clone())
    }

    /// When the next tick is needed: soon when a queue is dirty, else at the earliest due time;
    /// `None` when no queue needs work.
    pub fn wake_at(&self) -> Option<Wake> {
        if !self.dirty.is_empty() {
            return Some(Wake::Dirty);
        }
        self.by_due.first().map(|(due, _)| Wake::At(*due))
    }
}

/// A queue's due time from the heads of its sets: the schedule's first score (due when the clock
/// reaches it), the first lease deadline + 1 (a lease expires once the clock has passed it).
pub fn due_of(schedule_head: Option<i64>, active_head: Option<i64>) -> Option<i64> {
    let reap = active_head.map(|deadline| deadline.saturating_add(1));
    match (schedule_head, reap) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(name: &str) -> QueueId {
        (0, name.as_bytes().into())
    }

    #[test]
    fn a_touched_queue_is_read_once() {
        let mut index = Index::default();
        assert!(index.touch(0, b"a"));
        assert!(!index.touch(0, b"a"), "already dirty");
        assert!(index.touch(1, b"a"), "another database, another queue");
        assert_eq!(index.wake_at(), Some(Wake::Dirty));
        assert_eq!(index.take_dirty(), Some(q("a")));
        assert_eq!(index.take_dirty(), Some((1, b"a"[..].into())));
        assert_eq!(index.take_dirty(), None);
        assert!(index.touch(0, b"a"), "dirty again after its read");
    }

    #[test]
    fn due_times_order_the_queues() {
        let mut index = Index::default();
        index.set_due(&q("late"), Some(300));
        index.set_due(&q("early"), Some(100));
        index.set_due(&q("mid"), Some(200));
        assert_eq!(index.wake_at(), Some(Wake::At(100)));
        assert_eq!(index.first_due(99), None, "nothing is due before 100");
        assert_eq!(index.first_due(250), Some(q("early")));
        index.set_due(&q("early"), Some(400));
        assert_eq!(index.first_due(250), Some(q("mid")));
        index.set_due(&q("mid"), None);
        index.set_due(&q("late"), None);
        assert_eq!(index.len(), 1, "queues with empty sets are forgotten");
        assert_eq!(index.wake_at(), Some(Wake::At(400)));
        index.set_due(&q("early"), None);
        assert!(index.is_empty());
        assert_eq!(index.wake_at(), None, "nothing to do: no tick");
    }

    #[test]
    fn a_queue_touched_while_due_stays_known() {
        let mut index = Index::default();
        index.set_due(&q("a"), Some(100));
        index.touch(0, b"a");
        index.set_due(&q("a"), None);
        assert_eq!(index.len(), 1, "dirty: its heads are read again");
        assert_eq!(index.take_dirty(), Some(q("a")));
        index.set_due(&q("a"), None);
        assert!(index.is_empty());
    }

    #[test]
    fn touch_all_marks_every_queue_once() {
        let mut index = Index::default();
        index.set_due(&q("a"), Some(1));
        index.set_due(&q("b"), Some(2));
        index.touch(0, b"a");
        index.touch_all();
        assert_eq!(index.dirty_len(), 2);
    }

    #[test]
    fn due_from_the_heads() {
        assert_eq!(due_of(None, None), None);
        assert_eq!(due_of(Some(500), None), Some(500));
        assert_eq!(
            due_of(None, Some(500)),
            Some(501),
            "a lease expires after its deadline"
        );
        assert_eq!(due_of(Some(500), Some(499)), Some(500));
        assert_eq!(due_of(Some(500), Some(200)), Some(201));
        assert_eq!(due_of(None, Some(i64::MAX)), Some(i64::MAX));
    }
}
