//! Templated names of the members of a group (`count` hosts of a host group, `instances` of an
//! application): `{i}` is the member's number from 1, and a little arithmetic spreads members
//! over hosts without listing them:
//!
//! | written      | member 1, 2, …, 8 of a group        | use                                   |
//! |--------------|-------------------------------------|---------------------------------------|
//! | `web{i}`     | web1, web2, …, web8                 | one name each                         |
//! | `c{i%4}`     | c1, c2, c3, c4, c1, c2, c3, c4      | round robin over 4 hosts              |
//! | `x{i/4}`     | x1, x1, x1, x1, x2, x2, x2, x2      | 4 consecutive members a host          |
//! | `x{i/4+2}`   | x3, x3, x3, x3, x4, x4, x4, x4      | the same, numbered from 3             |
//!
//! `{i%N}` is 1 + (i − 1) mod N and `{i/N}` is 1 + ⌊(i − 1) / N⌋, so both count from 1 like `{i}`;
//! `+K` adds K. Anything else between braces is refused with what was written.

/// The name of member `i` (from 1) of a group whose names follow `template`.
pub fn expand(template: &str, i: u64) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 4);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| format!("{template:?}: a '{{' without its '}}'"))?;
        out.push_str(&eval(&after[..close], i).map_err(|e| format!("{template:?}: {e}"))?.to_string());
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("{template:?}: a '}}' without its '{{'"));
    }
    out.push_str(rest);
    Ok(out)
}

/// Whether `template` names members differently (it has a `{…}` field).
pub fn is_template(template: &str) -> bool {
    template.contains('{')
}

fn eval(expr: &str, i: u64) -> Result<u64, String> {
    let e: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let bad = || format!("{{{expr}}} is not a member index; write {{i}}, {{i%N}}, {{i/N}}, optionally with +K (K, N whole numbers, N ≥ 1)");
    let rest = e.strip_prefix('i').ok_or_else(bad)?;
    let (op, rest) = match rest.chars().next() {
        Some(c @ ('%' | '/')) => {
            let end = rest[1..].find('+').map_or(rest.len(), |p| p + 1);
            let n: u64 = rest[1..end].parse().map_err(|_| bad())?;
            if n == 0 {
                return Err(bad());
            }
            (Some((c, n)), &rest[end..])
        }
        _ => (None, rest),
    };
    let k: u64 = match rest.strip_prefix('+') {
        Some(k) => k.parse().map_err(|_| bad())?,
        None if rest.is_empty() => 0,
        None => return Err(bad()),
    };
    let base = match op {
        None => i,
        Some(('%', n)) => 1 + (i - 1) % n,
        Some((_, n)) => 1 + (i - 1) / n,
    };
    base.checked_add(k).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_numbered_from_one() {
        let names = |t: &str| (1..=8).map(|i| expand(t, i).unwrap()).collect::<Vec<_>>().join(" ");
        assert_eq!(names("web{i}"), "web1 web2 web3 web4 web5 web6 web7 web8");
        assert_eq!(names("c{i%4}"), "c1 c2 c3 c4 c1 c2 c3 c4");
        assert_eq!(names("x{i/4}"), "x1 x1 x1 x1 x2 x2 x2 x2");
        assert_eq!(names("x{i/4+2}"), "x3 x3 x3 x3 x4 x4 x4 x4");
        assert_eq!(names("h{ i % 2 + 10 }-{i}"), "h11-1 h12-2 h11-3 h12-4 h11-5 h12-6 h11-7 h12-8");
        assert_eq!(names("plain"), "plain plain plain plain plain plain plain plain");
    }

    #[test]
    fn bad_templates_say_what_was_written() {
        for t in ["a{j}", "a{i%0}", "a{i*2}", "a{i", "a}i", "a{i+}", "a{i%x}"] {
            let e = expand(t, 1).unwrap_err();
            assert!(e.contains(t), "{t}: {e}");
        }
    }
}
