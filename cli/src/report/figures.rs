//! How a figure reads in text, the same in the Markdown report, the plots' labels, `tune` and
//! the benches. Sizes in bytes have their own module (`byte_size.rs`, which also parses them).

/// An FPR in percent with three significant digits: "0.977 %", "0.0123 %".
pub fn fpr_md(p: f64) -> String {
    if !p.is_finite() {
        return "—".into();
    }
    if p == 0.0 {
        return "0 %".into();
    }
    if p < 1e-6 {
        return format!("{p:.2e}");
    }
    let percent = p * 100.0;
    let decimals = (2 - percent.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{percent:.decimals$} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fpr_reads_in_percent() {
        assert_eq!(fpr_md(0.009_77), "0.977 %");
        assert_eq!(fpr_md(0.000_123_4), "0.0123 %");
        assert_eq!(fpr_md(0.25), "25.0 %");
        assert_eq!(fpr_md(0.0), "0 %");
        assert_eq!(fpr_md(1.234e-9), "1.23e-9");
    }
}
