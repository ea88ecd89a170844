//! Redis URLs as error messages show them: every password replaced by `***`, everything else
//! kept, so a message still says which server and which user. This file owns only the text of
//! URLs; parsing them for a connection is redis-rs's job.
//!
//! The rules are those of a URL's authority (`scheme://user:password@host:port`), applied
//! without a URL parser so that garbage never panics and never leaks: the user information
//! ends at the *last* `@` (a password may hold an unescaped `@`, `/` or `#`), and the
//! `pass=` / `password=` query values of a socket URL (`unix:///run/redis.sock?pass=...`) are
//! replaced too.

/// What a password is replaced with.
const HIDDEN: &str = "***";

/// `urls` (one URL, or several comma-separated) with every password replaced by `***`:
/// `redis://alice:s3cret@host:6379/0` reads `redis://alice:***@host:6379/0`,
/// `rediss://:s3cret@host` reads `rediss://:***@host`, `unix:///tmp/r.sock?pass=s3cret` reads
/// `unix:///tmp/r.sock?pass=***`. A URL with no password is returned as it is. Text that is no
/// URL at all loses everything before its last `@`.
///
/// ```
/// use linebloom::redis::redact_urls;
///
/// assert_eq!(
///     redact_urls("redis://alice:pw@10.0.0.1:6379,redis://alice:pw@10.0.0.2:6379"),
///     "redis://alice:***@10.0.0.1:6379,redis://alice:***@10.0.0.2:6379"
/// );
/// assert_eq!(redact_urls("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
/// ```
pub fn redact_urls(urls: &str) -> String {
    let mut out = String::with_capacity(urls.len());
    for (i, url) in urls.split(',').enumerate() {
        if i > 0 {
            out.push(',');
        }
        redact_one(url, &mut out);
    }
    out
}

/// One URL of the list, redacted, appended to `out`.
fn redact_one(url: &str, out: &mut String) {
    let (scheme, rest) = match url.find("://") {
        Some(at) => url.split_at(at + 3),
        None => ("", url),
    };
    out.push_str(scheme);
    let rest = match rest.rfind('@') {
        Some(at) => {
            let (user_info, after) = rest.split_at(at);
            match user_info.split_once(':') {
                // `user:password@` keeps the user; a bare `user@` holds no password. Text with
                // no scheme is no URL: all of it before the `@` may be secret.
                Some((user, _)) if !scheme.is_empty() => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(HIDDEN);
                }
                None if !scheme.is_empty() => out.push_str(user_info),
                _ => out.push_str(HIDDEN),
            }
            after
        }
        None => rest,
    };
    redact_query(rest, out);
}

/// The host, path, query and fragment of a URL, with the values of `pass=` and `password=`
/// query parameters replaced.
fn redact_query(rest: &str, out: &mut String) {
    let Some((path, query)) = rest.split_once('?') else {
        out.push_str(rest);
        return;
    };
    out.push_str(path);
    out.push('?');
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((key, _)) if is_password_key(key) => {
                out.push_str(key);
                out.push('=');
                out.push_str(HIDDEN);
            }
            _ => out.push_str(pair),
        }
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
}

fn is_password_key(key: &str) -> bool {
    key.eq_ignore_ascii_case("pass") || key.eq_ignore_ascii_case("password")
}

/// Every password in `urls`, as written and percent-decoded (no empty ones): what an error text
/// from elsewhere (redis-rs) is scrubbed of before it is shown, in case it ever quotes one.
pub(crate) fn passwords(urls: &str) -> Vec<String> {
    let mut found = Vec::new();
    for url in urls.split(',') {
        let rest = url.find("://").map_or(url, |at| &url[at + 3..]);
        if let Some((user_info, _)) = rest.rsplit_once('@')
            && let Some((_, secret)) = user_info.split_once(':')
        {
            found.push(secret.to_owned());
        }
        if let Some((_, query)) = rest.split_once('?') {
            let query = query.split_once('#').map_or(query, |(q, _)| q);
            for pair in query.split('&') {
                if let Some((key, value)) = pair.split_once('=')
                    && is_password_key(key)
                {
                    found.push(value.to_owned());
                }
            }
        }
    }
    let decoded: Vec<String> = found.iter().map(|p| percent_decoded(p)).collect();
    found.extend(decoded);
    found.retain(|p| !p.is_empty());
    found.sort();
    found.dedup();
    // Longest first, so a password that contains another is replaced whole.
    found.sort_by_key(|p| std::cmp::Reverse(p.len()));
    found
}

/// `text` with every one of `secrets` replaced by `***`.
pub(crate) fn scrub(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), HIDDEN);
        }
    }
    text
}

/// `%XX` escapes decoded (invalid ones kept as they are; bytes that are not UTF-8 lossily).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_and_users_hosts_and_databases_kept() {
        for (url, shown) in [
            (
                "redis://alice:alicePW9@127.0.0.1:6379/2",
                "redis://alice:***@127.0.0.1:6379/2",
            ),
            ("redis://:pw@host", "redis://:***@host"),
            (
                "rediss://bob:pw@host:6380/#insecure",
                "rediss://bob:***@host:6380/#insecure",
            ),
            ("valkeys://u:p@h", "valkeys://u:***@h"),
            ("redis://alice@host", "redis://alice@host"),
            ("redis://host:6379", "redis://host:6379"),
            ("redis://a:p@ss:w/rd#x@host:1", "redis://a:***@host:1"),
            ("redis://a:p%40ss@host", "redis://a:***@host"),
            ("unix:///run/redis.sock", "unix:///run/redis.sock"),
            (
                "redis+unix:///run/r.sock?db=1&user=al&pass=pw",
                "redis+unix:///run/r.sock?db=1&user=al&pass=***",
            ),
            (
                "unix:///r.sock?PASSWORD=pw#frag",
                "unix:///r.sock?PASSWORD=***#frag",
            ),
            ("unix://:pw@/r.sock", "unix://:***@/r.sock"),
            ("", ""),
        ] {
            assert_eq!(redact_urls(url), shown, "{url}");
        }
    }

    #[test]
    fn lists_are_redacted_url_by_url() {
        assert_eq!(
            redact_urls("redis://a:x@h1:1, redis://a:x@h2:2,,redis://h3:3"),
            "redis://a:***@h1:1, redis://a:***@h2:2,,redis://h3:3"
        );
    }

    #[test]
    fn garbage_loses_everything_before_its_last_at() {
        assert_eq!(redact_urls("alice:pw@host"), "***@host");
        assert_eq!(redact_urls("pw@"), "***@");
        assert_eq!(redact_urls("not a url"), "not a url");
        assert_eq!(redact_urls("://:@"), "://:***@");
        assert_eq!(redact_urls("@@@"), "***@");
        assert_eq!(
            redact_urls("redis://%zz:%@?&=#?pass"),
            "redis://%zz:***@?&=#?pass"
        );
        // Never panics on multi-byte text, wherever the separators fall.
        for text in ["rédis://é:ü@ß", "€://:€@€?pass=€", "@€", "€?€=€&pass"] {
            let shown = redact_urls(text);
            assert!(
                !shown.contains(":ü@") && !shown.contains("pass=€"),
                "{shown}"
            );
        }
    }

    #[test]
    fn the_scrub_list_holds_raw_and_decoded_passwords() {
        let found = passwords("redis://a:p%40ss@h,unix:///s?pass=q1&db=2,redis://h");
        assert_eq!(found, ["p%40ss", "p@ss", "q1"]);
        assert_eq!(scrub("x p@ss y q1", &found), "x *** y ***");
        // A user name is no secret: a server's "User alice has no permissions" stays readable.
        assert!(passwords("redis://alice@host").is_empty());
        assert!(passwords("redis://host").is_empty());
    }
}
