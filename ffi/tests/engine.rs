//! The engine through the C ABI, called from Rust: the same answers as the router,
//! handles (closed, forged), and closing while other threads call.

mod support;

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ach::{ach_buffer_free, ach_engine_close, ach_engine_request, AchBuffer, AchEngine, AchResult};
use ach_core::api::route_json;
use ach_core::engine::{Engine, EngineOptions};
use support::open;

const OPERATOR: &str = "ok_rust_ffi_operator_key_0123456789";

fn request(engine: *mut AchEngine, envelope: &str) -> Result<String, AchResult> {
    let envelope = CString::new(envelope).unwrap_or_default();
    let mut out = AchBuffer::default();
    // SAFETY: a valid C string and a valid out-buffer; any engine value is allowed.
    match unsafe { ach_engine_request(engine, envelope.as_ptr(), &mut out) } {
        AchResult::ACH_OK => {
            // SAFETY: on success `data` is NUL-terminated after `len` bytes.
            let text = unsafe { CStr::from_ptr(out.data.cast()) }.to_string_lossy().into_owned();
            assert_eq!(text.len(), out.len);
            ach_buffer_free(out);
            Ok(text)
        }
        other => {
            assert!(out.data.is_null(), "nothing written on failure");
            Err(other)
        }
    }
}

#[test]
fn answers_are_the_routers_byte_for_byte() {
    const START: &str = "2026-11-23T10:00:00-05:00";
    let engine = open(&format!(r#"{{"sandbox":true,"start":"{START}","operator_key":"{OPERATOR}"}}"#))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let start = ach_core::calendar::parse_instant(START).unwrap_or_else(|e| panic!("{e}"));
    let reference = Engine::in_memory(EngineOptions::manual(start).with_operator_key(OPERATOR).sandbox())
        .unwrap_or_else(|e| panic!("{e}"));
    for envelope in [
        format!(r#"{{"method":"GET","path":"/categories","api_key":"{OPERATOR}"}}"#),
        r#"{"method":"GET","path":"/categories"}"#.to_owned(),
        r#"{"method":"GET","path":"/openapi.json"}"#.to_owned(),
        format!(r#"{{"method":"DELETE","path":"/admin/partners","api_key":"{OPERATOR}"}}"#),
        format!(
            r#"{{"method":"POST","path":"/admin/partners","api_key":"{OPERATOR}","body":{{"nom":"x"}}}}"#
        ),
        format!(r#"{{"method":"GET","path":"/institutions/021000021","api_key":"{OPERATOR}"}}"#),
    ] {
        assert_eq!(request(engine, &envelope), Ok(route_json(&reference, &envelope)), "{envelope}");
    }
    ach_engine_close(engine);
}

#[test]
fn closed_and_forged_handles_answer_codes() {
    let engine = open("{}").unwrap_or_else(|e| panic!("{e:?}"));
    let get = r#"{"method":"GET","path":"/categories"}"#;
    let unauthenticated = r#"{"body":{"message":"Authentication failed.","success":false},"status":401}"#;
    assert_eq!(request(engine, get), Ok(unauthenticated.to_owned()));
    let mut local = 0u8;
    let forged: *mut AchEngine = std::ptr::from_mut(&mut local).cast();
    assert_eq!(request(forged, get), Err(AchResult::ACH_UNKNOWN_HANDLE));
    assert_eq!(request(std::ptr::null_mut(), get), Err(AchResult::ACH_NULL_POINTER));
    let never: *mut AchEngine = std::ptr::without_provenance_mut(0xFFFF_FFAC);
    assert_eq!(request(never, get), Err(AchResult::ACH_UNKNOWN_HANDLE));
    assert_eq!(request(engine, "{not json"), Err(AchResult::ACH_INVALID_JSON));
    assert_eq!(request(engine, r#"{"path":"/"}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
    ach_engine_close(engine);
    assert_eq!(request(engine, get), Err(AchResult::ACH_CLOSED));
    ach_engine_close(engine);
    ach_engine_close(forged);
    assert_eq!(request(engine, get), Err(AchResult::ACH_CLOSED));
    let again = open("{}").unwrap_or_else(|e| panic!("{e:?}"));
    assert_ne!(again, engine, "handles are never reused");
    ach_engine_close(again);
}

#[test]
fn closing_while_other_threads_call_is_defined() {
    let engine = open("{}").unwrap_or_else(|e| panic!("{e:?}"));
    let handle = engine.addr(); // usize: a handle is a value, shareable across threads
    let done = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let engine: *mut AchEngine = std::ptr::without_provenance_mut(handle);
                let mut seen_closed = false;
                let mut ok = 0;
                for _ in 0..100_000 {
                    match request(engine, r#"{"method":"GET","path":"/openapi.json"}"#) {
                        Ok(answer) => {
                            assert!(!seen_closed, "an answer after ACH_CLOSED");
                            assert!(answer.ends_with(r#""status":200}"#));
                            ok += 1;
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(AchResult::ACH_CLOSED) => {
                            seen_closed = true;
                            break;
                        }
                        Err(other) => panic!("{other:?}"),
                    }
                }
                (ok, seen_closed)
            })
        })
        .collect();
    while done.load(Ordering::SeqCst) < 40 {
        std::thread::yield_now();
    }
    ach_engine_close(engine);
    for t in threads {
        let (ok, closed) = t.join().unwrap_or_else(|_| panic!("a thread panicked"));
        assert!(ok > 0 && closed);
    }
}

#[test]
fn a_file_database_survives_and_refuses_another_key() {
    let dir = std::env::temp_dir().join(format!("ach-ffi-test-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("engine.redb");
    let key_a = "11".repeat(32);
    let options = |key: &str| {
        format!(r#"{{"path":{},"operator_key":"{OPERATOR}","encryption_key":"{key}"}}"#, json_string(&path))
    };
    let engine = open(&options(&key_a)).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(open(&options(&key_a)), Err(AchResult::ACH_STORAGE), "already open");
    let created = request(
        engine,
        &format!(
            r#"{{"method":"POST","path":"/admin/partners","api_key":"{OPERATOR}","body":{{"name":"P"}}}}"#
        ),
    );
    assert!(created.is_ok_and(|a| a.ends_with(r#""status":201}"#)));
    ach_engine_close(engine);
    assert_eq!(open(&options(&"22".repeat(32))), Err(AchResult::ACH_WRONG_KEY));
    let reopened = open(&options(&key_a)).unwrap_or_else(|e| panic!("{e:?}"));
    ach_engine_close(reopened);
    let _ = std::fs::remove_dir_all(&dir);
}

fn json_string(path: &std::path::Path) -> String {
    format!("{:?}", path.display().to_string())
}
