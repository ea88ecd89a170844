//! The arguments of `BF.RESERVE`, `BF.INSERT`, `BF.INFO` and the iterators, read as RedisBloom
//! reads them and refused with its error texts.
//!
//! Pure functions over the arguments' bytes (no Redis): the commands call them before they
//! open a key, so a bad argument never changes anything.

use crate::chain::{DEFAULT_EXPANSION, Params};

/// A refused argument: the error reply.
pub type ArgError = &'static str;

pub const BAD_ERROR_RATE: ArgError = "ERR bad error rate";
pub const ERROR_RATE_RANGE: ArgError = "ERR (0 < error rate range < 1)";
pub const BAD_CAPACITY: ArgError = "ERR bad capacity";
pub const CAPACITY_RANGE: ArgError = "ERR (capacity should be larger than 0)";
pub const BAD_EXPANSION: ArgError = "ERR bad expansion";
pub const NONSCALING_EXPANSION: ArgError = "ERR Nonscaling filters cannot expand";
pub const BAD_ITERATOR: ArgError = "ERR Second argument must be numeric";
pub const INVALID_INFO: ArgError = "ERR Invalid information value";
pub const UNKNOWN_ARGUMENT: ArgError = "ERR unknown argument";

fn text(arg: &[u8]) -> Option<&str> {
    std::str::from_utf8(arg).ok()
}

/// An integer as Redis writes them: optional `-`, decimal digits, no spaces.
pub fn integer(arg: &[u8]) -> Option<i64> {
    let s = text(arg)?;
    if s.starts_with('+') {
        return None;
    }
    s.parse().ok()
}

/// An error rate: a decimal number above 0 and below 1.
pub fn error_rate(arg: &[u8]) -> Result<f64, ArgError> {
    let rate: f64 = text(arg)
        .and_then(|s| s.trim().parse().ok())
        .filter(|r: &f64| !r.is_nan())
        .ok_or(BAD_ERROR_RATE)?;
    if rate > 0.0 && rate < 1.0 {
        Ok(rate)
    } else {
        Err(ERROR_RATE_RANGE)
    }
}

/// A capacity: an integer above 0.
pub fn capacity(arg: &[u8]) -> Result<u64, ArgError> {
    let capacity = integer(arg).ok_or(BAD_CAPACITY)?;
    u64::try_from(capacity)
        .ok()
        .filter(|&c| c > 0)
        .ok_or(CAPACITY_RANGE)
}

/// An expansion: an integer, at least 0 (0 makes the filter non-scaling, as in RedisBloom).
pub fn expansion(arg: &[u8]) -> Result<u64, ArgError> {
    integer(arg)
        .and_then(|e| u64::try_from(e).ok())
        .ok_or(BAD_EXPANSION)
}

fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// Folds `EXPANSION` and `NONSCALING` into one expansion (0: non-scaling).
fn scaling(expansion: Option<u64>, nonscaling: bool) -> Result<u64, ArgError> {
    match (expansion, nonscaling) {
        (Some(0), _) | (None, true) => Ok(0),
        (Some(_), true) => Err(NONSCALING_EXPANSION),
        (Some(e), false) => Ok(e),
        (None, false) => Ok(DEFAULT_EXPANSION),
    }
}

/// `BF.RESERVE`'s arguments after the key: `error_rate capacity [EXPANSION n] [NONSCALING]`.
pub fn reserve(args: &[&[u8]]) -> Result<Params, ArgError> {
    let [rate, cap, options @ ..] = args else {
        return Err(UNKNOWN_ARGUMENT);
    };
    let error_rate = error_rate(rate)?;
    let capacity = capacity(cap)?;
    let mut expansion_arg = None;
    let mut nonscaling = false;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        if is(option, "EXPANSION") {
            let value = options.next().ok_or(BAD_EXPANSION)?;
            expansion_arg = Some(expansion(value)?);
        } else if is(option, "NONSCALING") {
            nonscaling = true;
        } else {
            return Err(UNKNOWN_ARGUMENT);
        }
    }
    Ok(Params {
        error_rate,
        capacity,
        expansion: scaling(expansion_arg, nonscaling)?,
    })
}

/// `BF.INSERT`'s options and where its items start.
#[derive(Debug, PartialEq)]
pub struct Insert {
    /// The parameters of the filter, should the command create it.
    pub params: Params,
    /// `NOCREATE`: a missing key is an error.
    pub nocreate: bool,
    /// The index (into the arguments after the key) of the first item.
    pub items_at: usize,
}

/// `BF.INSERT`'s arguments after the key: `[CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE]
/// [NONSCALING] ITEMS item...`, in any order before `ITEMS`. `None` when there is no item (the
/// command then answers with the arity error).
pub fn insert(args: &[&[u8]]) -> Result<Option<Insert>, ArgError> {
    let mut params = Params::DEFAULT;
    let mut expansion_arg = None;
    let mut nonscaling = false;
    let mut nocreate = false;
    let mut i = 0;
    while i < args.len() {
        let option = args[i];
        let value = args.get(i + 1).copied();
        if is(option, "ITEMS") {
            if i + 1 == args.len() {
                return Ok(None);
            }
            params.expansion = scaling(expansion_arg, nonscaling)?;
            return Ok(Some(Insert {
                params,
                nocreate,
                items_at: i + 1,
            }));
        } else if is(option, "CAPACITY") {
            params.capacity = capacity(value.ok_or(BAD_CAPACITY)?)?;
            i += 2;
        } else if is(option, "ERROR") {
            params.error_rate = error_rate(value.ok_or(BAD_ERROR_RATE)?)?;
            i += 2;
        } else if is(option, "EXPANSION") {
            expansion_arg = Some(expansion(value.ok_or(BAD_EXPANSION)?)?);
            i += 2;
        } else if is(option, "NOCREATE") {
            nocreate = true;
            i += 1;
        } else if is(option, "NONSCALING") {
            nonscaling = true;
            i += 1;
        } else {
            return Err(UNKNOWN_ARGUMENT);
        }
    }
    Ok(None)
}

/// One field of `BF.INFO key FIELD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoField {
    Capacity,
    Size,
    Filters,
    Items,
    Expansion,
}

/// `BF.INFO`'s optional field.
pub fn info_field(arg: &[u8]) -> Result<InfoField, ArgError> {
    [
        ("CAPACITY", InfoField::Capacity),
        ("SIZE", InfoField::Size),
        ("FILTERS", InfoField::Filters),
        ("ITEMS", InfoField::Items),
        ("EXPANSION", InfoField::Expansion),
    ]
    .into_iter()
    .find(|(name, _)| is(arg, name))
    .map(|(_, field)| field)
    .ok_or(INVALID_INFO)
}

/// The iterator of `BF.SCANDUMP` / `BF.LOADCHUNK`: an integer, at least 0.
pub fn iterator(arg: &[u8]) -> Result<u64, ArgError> {
    integer(arg)
        .and_then(|i| u64::try_from(i).ok())
        .ok_or(BAD_ITERATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&[u8]> {
        s.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn reserve_reads_options_in_any_case_and_order() {
        let p = reserve(&words("0.001 5000 expansion 4")).unwrap();
        assert_eq!((p.error_rate, p.capacity, p.expansion), (0.001, 5000, 4));
        assert_eq!(reserve(&words("0.01 10 NONSCALING")).unwrap().expansion, 0);
        assert_eq!(reserve(&words("0.01 10 EXPANSION 0")).unwrap().expansion, 0);
        assert_eq!(reserve(&words("0.01 10")).unwrap().expansion, 2);
        assert_eq!(reserve(&words("1e-3 10")).unwrap().error_rate, 0.001);
    }

    #[test]
    fn reserve_refuses_with_redisblooms_texts() {
        for (args, error) in [
            ("abc 10", BAD_ERROR_RATE),
            ("nan 10", BAD_ERROR_RATE),
            ("0 10", ERROR_RATE_RANGE),
            ("1 10", ERROR_RATE_RANGE),
            ("-0.5 10", ERROR_RATE_RANGE),
            ("inf 10", ERROR_RATE_RANGE),
            ("0.01 ten", BAD_CAPACITY),
            ("0.01 1.5", BAD_CAPACITY),
            ("0.01 0", CAPACITY_RANGE),
            ("0.01 -3", CAPACITY_RANGE),
            ("0.01 10 EXPANSION", BAD_EXPANSION),
            ("0.01 10 EXPANSION -1", BAD_EXPANSION),
            ("0.01 10 EXPANSION two", BAD_EXPANSION),
            ("0.01 10 EXPANSION 2 NONSCALING", NONSCALING_EXPANSION),
            ("0.01 10 SCALING", UNKNOWN_ARGUMENT),
        ] {
            assert_eq!(reserve(&words(args)), Err(error), "{args}");
        }
    }

    #[test]
    fn insert_finds_items_after_options() {
        let ins = insert(&words("CAPACITY 1000 ERROR 0.001 NOCREATE ITEMS a b"))
            .unwrap()
            .unwrap();
        assert_eq!(ins.params.capacity, 1000);
        assert_eq!(ins.params.error_rate, 0.001);
        assert_eq!(ins.params.expansion, 2);
        assert!(ins.nocreate);
        assert_eq!(ins.items_at, 6);
        let ins = insert(&words("nonscaling items ITEMS")).unwrap().unwrap();
        assert_eq!(ins.params.expansion, 0);
        assert_eq!(ins.items_at, 2);
        assert_eq!(insert(&words("ITEMS")), Ok(None));
        assert_eq!(insert(&words("CAPACITY 10")), Ok(None));
        assert_eq!(insert(&words("CAPACITY 0 ITEMS a")), Err(CAPACITY_RANGE));
        assert_eq!(insert(&words("ERROR 2 ITEMS a")), Err(ERROR_RATE_RANGE));
        assert_eq!(insert(&words("CAPACITY")), Err(BAD_CAPACITY));
        assert_eq!(insert(&words("BOGUS ITEMS a")), Err(UNKNOWN_ARGUMENT));
        assert_eq!(
            insert(&words("EXPANSION 3 NONSCALING ITEMS a")),
            Err(NONSCALING_EXPANSION)
        );
    }

    #[test]
    fn info_fields_and_iterators() {
        assert_eq!(info_field(b"items"), Ok(InfoField::Items));
        assert_eq!(info_field(b"Expansion"), Ok(InfoField::Expansion));
        assert_eq!(info_field(b"ERROR"), Err(INVALID_INFO));
        assert_eq!(iterator(b"0"), Ok(0));
        assert_eq!(iterator(b"9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(iterator(b"-1"), Err(BAD_ITERATOR));
        assert_eq!(iterator(b"+1"), Err(BAD_ITERATOR));
        assert_eq!(iterator(b"1.0"), Err(BAD_ITERATOR));
    }
}
