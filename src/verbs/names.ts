/** Generated from protocol/ by scripts/protocol-doc.ts: do not edit. */

/** A verb token the protocol declares. */
export type VerbName =
  | "ACK"
  | "ADD"
  | "BCLAIM"
  | "CANCEL"
  | "CLAIM"
  | "CLAIMN"
  | "CLEAN"
  | "COMPLETE"
  | "COMPLETEN"
  | "COMPLETENEXT"
  | "DRAIN"
  | "ENQUEUE"
  | "EVENTS"
  | "EXPEDITE"
  | "EXTEND"
  | "FAIL"
  | "FAILNEXT"
  | "FIRE"
  | "FORGET"
  | "INSTALL"
  | "LANES"
  | "LIMIT"
  | "LOG"
  | "OBLITERATE"
  | "PARENT"
  | "PAUSE"
  | "PAUSESCHEDULE"
  | "PROGRESS"
  | "PROMOTE"
  | "REAP"
  | "REMOVE"
  | "REQUEUE"
  | "RESCHEDULE"
  | "RESUME"
  | "RESUMESCHEDULE"
  | "RETRY"
  | "SCHEDULE"
  | "SETTLE"
  | "UNSCHEDULE"
  | "UPDATE"
  | "VERSION";

/** A key slot a verb may declare (`protocol.json` `key_slots`). */
export type KeySlot =
  | "pending"
  | "active"
  | "schedule"
  | "done"
  | "dead"
  | "meta"
  | "waiting"
  | "outbox"
  | "repeats"
  | "row"
  | "base"
  | "version";

/** A key a transition derives from the queue's base (`protocol.json` `derived_keys`). */
export type DerivedKey =
  | "events"
  | "wake"
  | "limits"
  | "rate"
  | "groups"
  | "parked"
  | "group"
  | "record"
  | "repeat";

/** The type of a queue key there is one of per queue: what follows the base (`""`: the base itself). */
export type QueueKeyType =
  | "pending"
  | "active"
  | "schedule"
  | "done"
  | "dead"
  | "meta"
  | "waiting"
  | "outbox"
  | "repeats"
  | ""
  | "events"
  | "wake"
  | "limits"
  | "rate"
  | "groups"
  | "parked";

/** The type prefix of a queue key there is one of per parameter (`job:` + an id: the row). */
export type KeyPrefix = "job:" | "group:" | "key:" | "repeat:";
