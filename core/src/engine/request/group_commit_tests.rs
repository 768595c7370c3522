//! A group commit's leader that unwinds (a panic inside the engine) still
//! answers each caller of its group, and gives up the lead: nobody waits for
//! ever, and the next caller leads.
#![allow(clippy::unwrap_used)]

use crate::engine::request::group_commit::Leader;
use crate::engine::{Caller, Engine, EngineOptions, Operation, Outcome, Refusal};
use crate::AchError;

#[test]
fn a_leader_that_unwinds_answers_message_one_and_gives_up_the_lead() {
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-23T15:00:00Z").unwrap().to_utc();
    let engine = Engine::in_memory(EngineOptions::manual(now)).unwrap();
    engine.groups.lock().leading = true;
    drop(Leader { engine: &engine, tickets: vec![7, 8] });
    let mut queue = engine.groups.lock();
    for ticket in [7, 8] {
        let answer = queue.answers.remove(&ticket).unwrap();
        assert!(matches!(&answer, Err(Refusal::Refused { error: AchError::SystemUnable, .. })), "{answer:?}");
    }
    assert!(!queue.leading, "another caller may lead");
    drop(queue);
    let answer = engine.execute(&Caller::Operator, Operation::CreatePartner { name: "P".into() });
    assert!(matches!(answer, Ok(Outcome::PartnerCreated { .. })), "{answer:?}");
}
