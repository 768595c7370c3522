//! What a flood of strangers sends: requests with made-up keys, to paths the
//! API lacks (answered 404) and to real ones (401). The same seed draws the
//! same requests (xorshift64), so a test's flood is the same at every run.

/// A made-up request and the status it must be answered with.
#[derive(Debug, Clone)]
pub struct Stranger {
    /// `GET`, `POST` or `PUT`.
    pub method: &'static str,
    /// The path (a made-up one, or an endpoint's).
    pub path: String,
    /// A made-up API key (no key of the server's).
    pub key: String,
    /// `{"partner_id":"par_x"}` for a `POST`, else empty.
    pub body: Vec<u8>,
    /// 404 for a path the API lacks, 401 for an endpoint's.
    pub expected: u16,
}

/// A deterministic source of [`Stranger`]s.
pub struct Strangers(u64);

impl Strangers {
    /// The requests of `seed` (any value; 0 is taken as 1).
    pub fn new(seed: u64) -> Strangers {
        Strangers(0x9E37_79B9_7F4A_7C15 ^ seed.max(1))
    }

    fn draw(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn word(&mut self, len: usize) -> String {
        const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        (0..len).map(|_| char::from(LETTERS[(self.draw() % LETTERS.len() as u64) as usize])).collect()
    }

    /// The next request: a third of the keys look like partners', a third
    /// like merchants', a third like nothing; a third of the paths are
    /// made up.
    pub fn next_request(&mut self) -> Stranger {
        let key = match self.draw() % 3 {
            0 => format!("pk_{}", self.word(32)),
            1 => format!("mk_{}", self.word(32)),
            _ => self.word(12),
        };
        let id = self.word(22);
        let (method, path, expected) = match self.draw() % 6 {
            0 => ("GET", format!("/{}", self.word(8)), 404),
            1 => ("POST", format!("/{}/{}", self.word(6), self.word(6)), 404),
            2 => ("POST", "/transactions".to_owned(), 401),
            3 => ("PUT", format!("/transactions/txn_{id}/void"), 401),
            4 => ("GET", format!("/status-changes/{id}"), 401),
            _ => ("GET", "/events".to_owned(), 401),
        };
        let body = if method == "POST" { br#"{"partner_id":"par_x"}"#.to_vec() } else { Vec::new() };
        Stranger { method, path, key, body, expected }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_draws_the_same_requests_and_every_kind_comes() {
        let (mut a, mut b) = (Strangers::new(7), Strangers::new(7));
        let drawn: Vec<Stranger> = (0..600).map(|_| a.next_request()).collect();
        for s in &drawn {
            let again = b.next_request();
            assert_eq!(
                (s.method, &s.path, &s.key, s.expected),
                (again.method, &again.path, &again.key, again.expected)
            );
        }
        let not_found = drawn.iter().filter(|s| s.expected == 404).count();
        assert!((100..300).contains(&not_found), "{not_found} of 600 to made-up paths");
        assert!(drawn.iter().all(|s| s.expected == 404
            || s.path.starts_with("/transactions")
            || s.path.starts_with("/status-changes/")
            || s.path == "/events"));
        assert_ne!(Strangers::new(8).next_request().key, drawn[0].key);
    }
}
