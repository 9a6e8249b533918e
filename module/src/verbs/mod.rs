//! The verbs, one file per family (the protocol data's `family`): each handler reads like its
//! section of the protocol — shape → layout → fence ([`crate::open`]) → values → gates → write
//! guard → writes — and takes its form, keys and values from [`crate::protocol`].

pub mod admin;
pub mod block;
pub mod flows;
pub mod install;
pub mod jobs;
pub mod lease;
pub mod limits;
pub mod operate;
pub mod repeat;
pub mod report;
pub mod timers;
pub mod version;
