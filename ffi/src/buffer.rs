//! `AchBuffer`: bytes the library allocated and hands to C, released by
//! `ach_buffer_free`.

use crate::boundary;

/// Bytes owned by the library: an answer (JSON) or an error detail (text).
///
/// `data` points to `len` bytes followed by one NUL byte that `len` does not count,
/// so C can use `data` directly as a NUL-terminated string (`printf("%s",
/// (char *)buf.data)`); the JSON answers never contain a NUL of their own. The
/// bytes are UTF-8.
///
/// The caller owns the buffer once a function has written it, and releases it with
/// `ach_buffer_free` exactly once, passing the struct back unchanged (never with
/// `free()`). A zeroed buffer (`AchBuffer buf = {0};`, `data == NULL`) is harmless to
/// free, so a buffer can be freed on every path even when the call that should
/// have filled it failed: functions write their out-buffer only on success.
#[repr(C)]
#[derive(Debug)]
pub struct AchBuffer {
    /// The first byte (NULL for a zeroed buffer); `data[len]` is a NUL byte.
    pub data: *mut u8,
    /// The number of bytes, not counting the final NUL.
    pub len: usize,
}

impl Default for AchBuffer {
    fn default() -> Self {
        AchBuffer { data: std::ptr::null_mut(), len: 0 }
    }
}

/// Bytes after the final NUL that record the allocation's capacity.
const TRAILER: usize = std::mem::size_of::<usize>();

impl AchBuffer {
    /// A buffer holding `text` (and the final NUL).
    ///
    /// The allocation is `text`'s own (no copy, no shrinking realloc): after the
    /// bytes come the NUL and then the allocation's capacity (native-endian
    /// `usize`), so `ach_buffer_free` can rebuild the exact allocation from
    /// `(data, len)` alone. C sees only `len` bytes and the NUL.
    pub fn from_text(text: String) -> AchBuffer {
        let mut bytes = text.into_bytes();
        let len = bytes.len();
        bytes.reserve_exact(1 + TRAILER);
        bytes.push(0);
        let capacity = bytes.capacity();
        bytes.extend_from_slice(&capacity.to_ne_bytes());
        debug_assert_eq!(bytes.capacity(), capacity, "reserved: no reallocation");
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        AchBuffer { data: bytes.as_mut_ptr(), len }
    }

    /// The bytes (without the final NUL); empty for a zeroed buffer.
    pub fn as_bytes(&self) -> &[u8] {
        if self.data.is_null() {
            return &[];
        }
        // SAFETY: a non-NULL buffer comes from `from_text`: `data` points to `len + 1`
        // initialised bytes that live until ach_buffer_free.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// The bytes as text (lossy for bytes that are not UTF-8, which this library
    /// never produces).
    pub fn to_text(&self) -> String {
        String::from_utf8_lossy(self.as_bytes()).into_owned()
    }
}

/// Release a buffer written by a libach function. A zeroed buffer (`data == NULL`)
/// is harmless and does nothing.
///
/// Pass each buffer back unchanged, once: freeing it twice, or freeing a buffer
/// whose `data` or `len` was altered, is undefined behaviour (as with `free()`).
/// Copy the struct freely, but free only one of the copies.
#[no_mangle]
pub extern "C" fn ach_buffer_free(buffer: AchBuffer) {
    if buffer.data.is_null() {
        return;
    }
    boundary::catch((), || {
        let used = buffer.len + 1 + TRAILER;
        // SAFETY: a non-NULL buffer was made by `AchBuffer::from_text`, which leaked a
        // Vec<u8> at `data` holding `len` bytes, the NUL and then its capacity
        // (`used` initialised bytes in all); the caller passes it back unchanged and
        // once. So the capacity is read from where it was written, and the Vec
        // rebuilt with its true length and capacity, then dropped.
        unsafe {
            let capacity = buffer.data.add(buffer.len + 1).cast::<usize>().read_unaligned();
            drop(Vec::from_raw_parts(buffer.data, used, capacity));
        }
    });
}

/// Release the buffer at `*buffer` (as `ach_buffer_free` does) and zero it, so a
/// second release through the same struct is harmless. For hosts that cannot pass
/// a struct by value (COBOL's `CALL ... USING BY REFERENCE`, some FFI layers), and
/// for C code that prefers buffers that cannot be freed twice. NULL does nothing.
///
/// # Safety
/// `buffer` is NULL or points to a readable and writable `AchBuffer` that is zeroed
/// or was written by a libach function (and not released since).
#[no_mangle]
pub unsafe extern "C" fn ach_buffer_release(buffer: *mut AchBuffer) {
    if buffer.is_null() {
        return;
    }
    // SAFETY: not NULL; readable and writable by the caller's contract. The struct is
    // moved out and replaced by a zeroed one in a single step.
    let owned = unsafe { std::ptr::replace(buffer, AchBuffer::default()) };
    ach_buffer_free(owned);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_nul_terminated_and_freed() {
        let b = AchBuffer::from_text("héllo".to_owned());
        assert_eq!(b.len, 6);
        assert_eq!(b.as_bytes(), "héllo".as_bytes());
        // SAFETY: `data` points to len + 1 bytes.
        assert_eq!(unsafe { *b.data.add(b.len) }, 0);
        ach_buffer_free(b);
        let empty = AchBuffer::from_text(String::new());
        assert!(!empty.data.is_null());
        assert_eq!(empty.to_text(), "");
        ach_buffer_free(empty);
        ach_buffer_free(AchBuffer::default());
        let mut b = AchBuffer::from_text("once".to_owned());
        // SAFETY: a valid buffer, then a zeroed one, then NULL.
        unsafe {
            ach_buffer_release(&mut b);
            assert!(b.data.is_null() && b.len == 0);
            ach_buffer_release(&mut b);
            ach_buffer_release(std::ptr::null_mut());
        }
    }
}
