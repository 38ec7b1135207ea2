//! Pattern matching: LIKE / NOT LIKE / ILIKE / NOT ILIKE (`%`, `_`,
//! backslash escape; character-wise on text, byte-wise on bytea; bpchar
//! matches with its blank padding, as PostgreSQL) and the POSIX regex
//! operators ~ !~ ~* !~* through a small backtracking matcher (literals,
//! `.`, `^`, `$`, `*`, `+`, `?`, `{m,n}`, bracket classes with ranges and
//! `[:alpha:]`-style names, `\d \w \s` escapes, alternation and groups).
//! A constant pattern is compiled once per call, with prefix / suffix /
//! substring / equality fast paths for LIKE.
//! Must not: implement back-references, lookaround or the rest of
//! PostgreSQL's ARE syntax (those patterns fail with 2201B).

use std::cell::Cell;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::Column;
use crate::exec::Operand;
use crate::types::DataType;

use super::common::{bytes, prim_column, BArg, Nulls};
use super::BinaryOp;

const INVALID_REGEX: &str = "2201B";

// ---------------------------------------------------------------- LIKE

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Lit(Vec<u8>),
    /// `_`: one character (one byte for bytea).
    One,
    /// `%`
    Any,
}

/// A compiled LIKE pattern.
#[derive(Debug, Clone)]
pub(crate) struct LikePattern {
    toks: Vec<Tok>,
    kind: LikeKind,
    bytewise: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum LikeKind {
    Exact(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    Contains(Vec<u8>),
    General,
}

impl LikePattern {
    /// Compiles `pattern`; 22025 when it ends with the escape character.
    pub fn compile(pattern: &[u8], bytewise: bool) -> DbResult<LikePattern> {
        let mut toks: Vec<Tok> = Vec::new();
        let mut i = 0;
        while i < pattern.len() {
            let c = pattern[i];
            match c {
                b'%' => {
                    if toks.last() != Some(&Tok::Any) {
                        toks.push(Tok::Any);
                    }
                    i += 1;
                }
                b'_' => {
                    toks.push(Tok::One);
                    i += 1;
                }
                _ => {
                    let start = if c == b'\\' {
                        if i + 1 >= pattern.len() {
                            return Err(DbError::new(
                                sqlstate::INVALID_ESCAPE_SEQUENCE,
                                "LIKE pattern must not end with escape character",
                            ));
                        }
                        i + 1
                    } else {
                        i
                    };
                    let n = if bytewise {
                        1
                    } else {
                        utf8_len(pattern[start])
                    };
                    let end = (start + n).min(pattern.len());
                    match toks.last_mut() {
                        Some(Tok::Lit(l)) => l.extend_from_slice(&pattern[start..end]),
                        _ => toks.push(Tok::Lit(pattern[start..end].to_vec())),
                    }
                    i = end;
                }
            }
        }
        let kind = match toks.as_slice() {
            [] => LikeKind::Exact(Vec::new()),
            [Tok::Lit(l)] => LikeKind::Exact(l.clone()),
            [Tok::Lit(l), Tok::Any] => LikeKind::Prefix(l.clone()),
            [Tok::Any, Tok::Lit(l)] => LikeKind::Suffix(l.clone()),
            [Tok::Any, Tok::Lit(l), Tok::Any] => LikeKind::Contains(l.clone()),
            [Tok::Any] => LikeKind::Prefix(Vec::new()),
            _ => LikeKind::General,
        };
        Ok(LikePattern {
            toks,
            kind,
            bytewise,
        })
    }

    #[inline]
    pub fn matches(&self, s: &[u8]) -> bool {
        match &self.kind {
            LikeKind::Exact(l) => s == l.as_slice(),
            LikeKind::Prefix(l) => s.starts_with(l),
            LikeKind::Suffix(l) => s.ends_with(l),
            LikeKind::Contains(l) => find(s, l),
            LikeKind::General => self.general(s),
        }
    }

    fn step(&self, s: &[u8], i: usize) -> usize {
        if self.bytewise {
            i + 1
        } else {
            (i + utf8_len(s[i])).min(s.len())
        }
    }

    /// Wildcard matching with backtracking to the last `%` (every other
    /// token has a fixed length, so earlier `%`s never need to grow).
    fn general(&self, s: &[u8]) -> bool {
        let toks = &self.toks;
        let (mut ti, mut si) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        loop {
            if ti < toks.len() {
                match &toks[ti] {
                    Tok::Any => {
                        star = Some((ti + 1, si));
                        ti += 1;
                        continue;
                    }
                    Tok::One if si < s.len() => {
                        si = self.step(s, si);
                        ti += 1;
                        continue;
                    }
                    Tok::Lit(l) if s[si..].starts_with(l) => {
                        si += l.len();
                        ti += 1;
                        continue;
                    }
                    _ => {}
                }
            } else if si == s.len() {
                return true;
            }
            match star {
                Some((st, sp)) if sp < s.len() => {
                    let np = self.step(s, sp);
                    star = Some((st, np));
                    ti = st;
                    si = np;
                }
                _ => return false,
            }
        }
    }
}

#[inline]
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    if needle.len() > hay.len() {
        return false;
    }
    let first = needle[0];
    let last_start = hay.len() - needle.len();
    let mut i = 0;
    while i <= last_start {
        match hay[i..=last_start].iter().position(|&b| b == first) {
            None => return false,
            Some(p) => {
                i += p;
                if &hay[i..i + needle.len()] == needle {
                    return true;
                }
                i += 1;
            }
        }
    }
    false
}

/// Lower-cases text for ILIKE (ASCII fast path into a reused buffer).
fn lower_into<'b>(s: &[u8], buf: &'b mut Vec<u8>) -> &'b [u8] {
    buf.clear();
    if s.is_ascii() {
        buf.extend(s.iter().map(|b| b.to_ascii_lowercase()));
    } else {
        buf.extend_from_slice(
            std::str::from_utf8(s)
                .unwrap_or("")
                .to_lowercase()
                .as_bytes(),
        );
    }
    buf
}

/// LIKE-family operators. `ty` is the left side's type (bytea matches byte-wise).
pub(crate) fn like_op(
    op: BinaryOp,
    ty: DataType,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    let negate = matches!(op, BinaryOp::NotLike | BinaryOp::NotILike);
    let icase = matches!(op, BinaryOp::ILike | BinaryOp::NotILike);
    let bytewise = ty == DataType::Bytea;
    let (s, p) = (bytes(a, len)?, bytes(b, len)?);
    let mut out = vec![false; len];
    let mut buf = Vec::new();
    match p {
        BArg::Const(pat) => {
            let pat = if icase {
                lower_into(pat, &mut buf).to_vec()
            } else {
                pat.to_vec()
            };
            let compiled = LikePattern::compile(&pat, bytewise)?;
            for (i, o) in out.iter_mut().enumerate() {
                let v = s.get(i);
                let v = if icase { lower_into(v, &mut buf) } else { v };
                *o = compiled.matches(v) != negate;
            }
        }
        BArg::Col(pc) => {
            let mut cache: Option<(Vec<u8>, LikePattern)> = None;
            let mut pbuf = Vec::new();
            for (i, o) in out.iter_mut().enumerate() {
                if !nulls.is_valid(i) {
                    continue;
                }
                let raw = pc.get(i);
                let pat = if icase {
                    lower_into(raw, &mut pbuf)
                } else {
                    raw
                };
                if cache.as_ref().is_none_or(|(k, _)| k.as_slice() != pat) {
                    cache = Some((pat.to_vec(), LikePattern::compile(pat, bytewise)?));
                }
                let v = s.get(i);
                let v = if icase { lower_into(v, &mut buf) } else { v };
                if let Some((_, c)) = &cache {
                    *o = c.matches(v) != negate;
                }
            }
        }
    }
    Ok(prim_column(DataType::Bool, out, nulls))
}

// ---------------------------------------------------------------- regex

#[derive(Debug, Clone)]
enum ClassItem {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
    Named(&'static str),
}

#[derive(Debug, Clone)]
struct Class {
    negated: bool,
    items: Vec<ClassItem>,
}

impl Class {
    fn contains(&self, c: char, icase: bool) -> bool {
        let hit = |c: char| {
            self.items.iter().any(|it| match it {
                ClassItem::Range(a, b) => *a <= c && c <= *b,
                ClassItem::Digit(pos) => c.is_ascii_digit() == *pos,
                ClassItem::Word(pos) => (c.is_alphanumeric() || c == '_') == *pos,
                ClassItem::Space(pos) => c.is_whitespace() == *pos,
                ClassItem::Named(n) => named_class(n, c),
            })
        };
        let mut r = hit(c);
        if !r && icase {
            r = c.to_uppercase().any(hit) || c.to_lowercase().any(hit);
        }
        r != self.negated
    }
}

fn named_class(name: &str, c: char) -> bool {
    match name {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "word" => c.is_alphanumeric() || c == '_',
        "blank" => c == ' ' || c == '\t',
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        _ => false,
    }
}

#[derive(Debug, Clone)]
enum Node {
    Char(char),
    Any,
    Class(Class),
    Start,
    End,
    Group(Vec<Vec<Node>>),
    Repeat(Box<Node>, u32, u32),
}

struct Parser<'p> {
    p: &'p [char],
    i: usize,
}

fn bad_regex(what: &str) -> DbError {
    DbError::new(INVALID_REGEX, format!("invalid regular expression: {what}"))
}

impl<'p> Parser<'p> {
    fn peek(&self) -> Option<char> {
        self.p.get(self.i).copied()
    }

    fn alternation(&mut self, depth: usize) -> DbResult<Vec<Vec<Node>>> {
        let mut alts = vec![self.sequence(depth)?];
        while self.peek() == Some('|') {
            self.i += 1;
            alts.push(self.sequence(depth)?);
        }
        Ok(alts)
    }

    fn sequence(&mut self, depth: usize) -> DbResult<Vec<Node>> {
        let mut seq = Vec::new();
        while let Some(c) = self.peek() {
            let atom = match c {
                '|' => break,
                ')' => {
                    if depth == 0 {
                        return Err(bad_regex("parentheses () not balanced"));
                    }
                    break;
                }
                '(' => {
                    self.i += 1;
                    if self.p.get(self.i) == Some(&'?') {
                        if self.p.get(self.i + 1) == Some(&':') {
                            self.i += 2;
                        } else {
                            return Err(bad_regex("quantifier operand invalid"));
                        }
                    }
                    let alts = self.alternation(depth + 1)?;
                    if self.peek() != Some(')') {
                        return Err(bad_regex("parentheses () not balanced"));
                    }
                    self.i += 1;
                    Node::Group(alts)
                }
                '[' => {
                    self.i += 1;
                    Node::Class(self.class()?)
                }
                '.' => {
                    self.i += 1;
                    Node::Any
                }
                '^' => {
                    self.i += 1;
                    Node::Start
                }
                '$' => {
                    self.i += 1;
                    Node::End
                }
                '\\' => {
                    self.i += 1;
                    self.escape()?
                }
                '*' | '+' | '?' | '{' => return Err(bad_regex("quantifier operand invalid")),
                c => {
                    self.i += 1;
                    Node::Char(c)
                }
            };
            let atom = self.quantifier(atom)?;
            seq.push(atom);
        }
        Ok(seq)
    }

    fn quantifier(&mut self, mut atom: Node) -> DbResult<Node> {
        loop {
            let (min, max) = match self.peek() {
                Some('*') => (0, u32::MAX),
                Some('+') => (1, u32::MAX),
                Some('?') => (0, 1),
                Some('{') => {
                    self.i += 1;
                    let (mn, mx) = self.bounds()?;
                    self.i -= 1;
                    (mn, mx)
                }
                _ => return Ok(atom),
            };
            self.i += 1;
            if matches!(atom, Node::Start | Node::End) {
                return Err(bad_regex("quantifier operand invalid"));
            }
            // A lazy marker does not change whether a match exists.
            if self.peek() == Some('?') {
                self.i += 1;
            }
            if matches!(atom, Node::Repeat(..)) {
                return Err(bad_regex("quantifier operand invalid"));
            }
            atom = Node::Repeat(Box::new(atom), min, max);
        }
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let s: String = self.p[start..self.i].iter().collect();
        s.parse().ok()
    }

    /// `{m}`, `{m,}`, `{m,n}` after the `{`; leaves `i` after the `}`.
    fn bounds(&mut self) -> DbResult<(u32, u32)> {
        let bad = || bad_regex("invalid repetition count(s)");
        let min = self.number().ok_or_else(bad)?;
        let max = if self.peek() == Some(',') {
            self.i += 1;
            if self.peek() == Some('}') {
                u32::MAX
            } else {
                self.number().ok_or_else(bad)?
            }
        } else {
            min
        };
        if self.peek() != Some('}') || min > max || min > 255 || (max != u32::MAX && max > 255) {
            return Err(bad());
        }
        self.i += 1;
        Ok((min, max))
    }

    fn escape(&mut self) -> DbResult<Node> {
        let c = self
            .peek()
            .ok_or_else(|| bad_regex("invalid escape \\ sequence"))?;
        self.i += 1;
        let class = |item| {
            Node::Class(Class {
                negated: false,
                items: vec![item],
            })
        };
        Ok(match c {
            'd' => class(ClassItem::Digit(true)),
            'D' => class(ClassItem::Digit(false)),
            'w' => class(ClassItem::Word(true)),
            'W' => class(ClassItem::Word(false)),
            's' => class(ClassItem::Space(true)),
            'S' => class(ClassItem::Space(false)),
            'n' => Node::Char('\n'),
            't' => Node::Char('\t'),
            'r' => Node::Char('\r'),
            'A' => Node::Start,
            'Z' => Node::End,
            c if c.is_ascii_alphanumeric() => return Err(bad_regex("invalid escape \\ sequence")),
            c => Node::Char(c),
        })
    }

    fn class(&mut self) -> DbResult<Class> {
        let mut cls = Class {
            negated: false,
            items: Vec::new(),
        };
        if self.peek() == Some('^') {
            cls.negated = true;
            self.i += 1;
        }
        let mut first = true;
        loop {
            let c = self
                .peek()
                .ok_or_else(|| bad_regex("brackets [] not balanced"))?;
            if c == ']' && !first {
                self.i += 1;
                return Ok(cls);
            }
            first = false;
            if c == '[' && self.p.get(self.i + 1) == Some(&':') {
                let rest: String = self.p[self.i + 2..].iter().collect();
                let end = rest
                    .find(":]")
                    .ok_or_else(|| bad_regex("brackets [] not balanced"))?;
                let name = &rest[..end];
                let known = [
                    "alpha", "digit", "alnum", "upper", "lower", "space", "punct", "xdigit",
                    "word", "blank", "cntrl", "print", "graph",
                ];
                let n = known
                    .iter()
                    .find(|k| **k == name)
                    .ok_or_else(|| bad_regex("invalid character class"))?;
                cls.items.push(ClassItem::Named(n));
                self.i += 2 + name.chars().count() + 2;
                continue;
            }
            self.i += 1;
            let lo = if c == '\\' {
                let e = self
                    .peek()
                    .ok_or_else(|| bad_regex("brackets [] not balanced"))?;
                self.i += 1;
                match e {
                    'd' => {
                        cls.items.push(ClassItem::Digit(true));
                        continue;
                    }
                    'w' => {
                        cls.items.push(ClassItem::Word(true));
                        continue;
                    }
                    's' => {
                        cls.items.push(ClassItem::Space(true));
                        continue;
                    }
                    'n' => '\n',
                    't' => '\t',
                    e => e,
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.p.get(self.i + 1).is_some_and(|&n| n != ']') {
                self.i += 1;
                let mut hi = self
                    .peek()
                    .ok_or_else(|| bad_regex("brackets [] not balanced"))?;
                self.i += 1;
                if hi == '\\' {
                    hi = self
                        .peek()
                        .ok_or_else(|| bad_regex("brackets [] not balanced"))?;
                    self.i += 1;
                }
                if hi < lo {
                    return Err(bad_regex("invalid character range"));
                }
                cls.items.push(ClassItem::Range(lo, hi));
            } else {
                cls.items.push(ClassItem::Range(lo, lo));
            }
        }
    }
}

/// A compiled regular expression (search semantics: matches anywhere unless anchored).
pub(crate) struct Regex {
    alts: Vec<Vec<Node>>,
    icase: bool,
}

/// Backtracking budget per match, so a pathological pattern fails instead of hanging.
const STEP_BUDGET: u64 = 5_000_000;

/// Nesting limit for repeated groups (each repetition of a group is a
/// recursion level; single-character repeats loop instead).
const GROUP_DEPTH_LIMIT: u32 = 400;

struct Matcher<'r> {
    s: &'r [char],
    icase: bool,
    steps: Cell<u64>,
    depth: Cell<u32>,
}

impl<'r> Matcher<'r> {
    fn tick(&self) -> bool {
        let n = self.steps.get() + 1;
        self.steps.set(n);
        n <= STEP_BUDGET
    }

    /// Does a single-character node match `c`? None for nodes that are not one character.
    fn single(&self, n: &Node, c: char) -> Option<bool> {
        match n {
            Node::Char(p) => Some(self.char_eq(*p, c)),
            Node::Any => Some(true),
            Node::Class(cl) => Some(cl.contains(c, self.icase)),
            _ => None,
        }
    }

    fn seq(&self, seq: &[Node], i: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        if !self.tick() {
            return false;
        }
        match seq.split_first() {
            None => k(i),
            Some((Node::Repeat(n, min, max), rest)) => {
                self.repeat(n, *min, *max, 0, i, &mut |j| self.seq(rest, j, k))
            }
            Some((n, rest)) => self.node(n, i, &mut |j| self.seq(rest, j, k)),
        }
    }

    fn char_eq(&self, p: char, c: char) -> bool {
        p == c || (self.icase && p.to_lowercase().eq(c.to_lowercase()))
    }

    fn node(&self, n: &Node, i: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        let s = self.s;
        match n {
            Node::Char(p) => i < s.len() && self.char_eq(*p, s[i]) && k(i + 1),
            Node::Any => i < s.len() && k(i + 1),
            Node::Class(c) => i < s.len() && c.contains(s[i], self.icase) && k(i + 1),
            Node::Start => i == 0 && k(i),
            Node::End => i == s.len() && k(i),
            Node::Group(alts) => alts.iter().any(|a| self.seq(a, i, k)),
            Node::Repeat(n, min, max) => self.repeat(n, *min, *max, 0, i, k),
        }
    }

    fn repeat(
        &self,
        n: &Node,
        min: u32,
        max: u32,
        count: u32,
        i: usize,
        k: &mut dyn FnMut(usize) -> bool,
    ) -> bool {
        if !self.tick() {
            return false;
        }
        if count == 0 && self.single(n, ' ').is_some() {
            // One character per repetition: scan forward, then back off (no recursion per character).
            let mut j = i;
            while ((j - i) as u64) < max as u64
                && j < self.s.len()
                && self.single(n, self.s[j]) == Some(true)
            {
                j += 1;
            }
            loop {
                if (j - i) as u64 >= min as u64 && k(j) {
                    return true;
                }
                if j == i || (j - i) as u64 <= min as u64 || !self.tick() {
                    return false;
                }
                j -= 1;
            }
        }
        let depth = self.depth.get();
        if depth >= GROUP_DEPTH_LIMIT {
            self.steps.set(STEP_BUDGET + 1);
            return false;
        }
        self.depth.set(depth + 1);
        let r = self.repeat_group(n, min, max, count, i, k);
        self.depth.set(depth);
        r
    }

    fn repeat_group(
        &self,
        n: &Node,
        min: u32,
        max: u32,
        count: u32,
        i: usize,
        k: &mut dyn FnMut(usize) -> bool,
    ) -> bool {
        if count < max
            && self.node(n, i, &mut |j| {
                if j == i && count >= min {
                    false
                } else {
                    self.repeat(n, min, max, count + 1, j, k)
                }
            })
        {
            return true;
        }
        count >= min && k(i)
    }
}

impl Regex {
    /// Compiles a pattern; 2201B for syntax this matcher does not support.
    pub fn compile(pattern: &str, icase: bool) -> DbResult<Regex> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut p = Parser { p: &chars, i: 0 };
        let alts = p.alternation(0)?;
        if p.i != chars.len() {
            return Err(bad_regex("parentheses () not balanced"));
        }
        Ok(Regex { alts, icase })
    }

    /// Does the pattern match anywhere in `s`? 54000 when backtracking runs away.
    pub fn is_match(&self, s: &str, buf: &mut Vec<char>) -> DbResult<bool> {
        buf.clear();
        buf.extend(s.chars());
        let m = Matcher {
            s: buf,
            icase: self.icase,
            steps: Cell::new(0),
            depth: Cell::new(0),
        };
        let anchored = self
            .alts
            .iter()
            .all(|a| matches!(a.first(), Some(Node::Start)));
        let last = if anchored { 0 } else { buf.len() };
        for start in 0..=last {
            if self.alts.iter().any(|a| m.seq(a, start, &mut |_| true)) {
                return Ok(true);
            }
            if m.steps.get() > STEP_BUDGET {
                return Err(DbError::new(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    "regular expression is too complex",
                ));
            }
        }
        Ok(false)
    }
}

/// ~ !~ ~* !~* (left side text or bpchar, right side the pattern).
pub(crate) fn regex_op(
    op: BinaryOp,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    let negate = matches!(op, BinaryOp::RegexNotMatch | BinaryOp::RegexNotIMatch);
    let icase = matches!(op, BinaryOp::RegexIMatch | BinaryOp::RegexNotIMatch);
    let (s, p) = (bytes(a, len)?, bytes(b, len)?);
    let mut out = vec![false; len];
    let mut buf = Vec::new();
    let mut cache: Option<(&[u8], Regex)> = None;
    for (i, o) in out.iter_mut().enumerate() {
        if !nulls.is_valid(i) {
            continue;
        }
        let pat = p.get(i);
        if cache.as_ref().is_none_or(|(k, _)| *k != pat) {
            cache = Some((
                pat,
                Regex::compile(std::str::from_utf8(pat).unwrap_or(""), icase)?,
            ));
        }
        if let Some((_, re)) = &cache {
            *o = re.is_match(s.get_str(i), &mut buf)? != negate;
        }
    }
    Ok(prim_column(DataType::Bool, out, nulls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    /// Row-at-a-time reference: PostgreSQL's recursive MatchText.
    fn like_ref(s: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some(('%', rest)) => (0..=s.len()).any(|k| like_ref(&s[k..], rest)),
            Some(('_', rest)) => !s.is_empty() && like_ref(&s[1..], rest),
            Some(('\\', rest)) if !rest.is_empty() => {
                !s.is_empty() && s[0] == rest[0] && like_ref(&s[1..], &rest[1..])
            }
            Some((c, rest)) => !s.is_empty() && s[0] == *c && like_ref(&s[1..], rest),
        }
    }

    fn lm(s: &str, p: &str) -> bool {
        LikePattern::compile(p.as_bytes(), false)
            .unwrap()
            .matches(s.as_bytes())
    }

    #[test]
    fn like_against_reference() {
        let alphabet = ['a', 'b', 'é', '%', '_', '\\'];
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..4000 {
            let s: String = (0..next() % 7).map(|_| alphabet[next() % 3]).collect();
            let mut p: String = (0..next() % 6).map(|_| alphabet[next() % 6]).collect();
            if p.ends_with('\\') && !p.ends_with("\\\\") {
                p.push('a');
            }
            let Ok(c) = LikePattern::compile(p.as_bytes(), false) else {
                continue;
            };
            let sc: Vec<char> = s.chars().collect();
            let pc: Vec<char> = p.chars().collect();
            assert_eq!(
                c.matches(s.as_bytes()),
                like_ref(&sc, &pc),
                "{s:?} LIKE {p:?}"
            );
        }
    }

    #[test]
    fn like_postgres_cases() {
        assert!(lm("abc", "abc"));
        assert!(lm("abc", "a%"));
        assert!(lm("abc", "%c"));
        assert!(lm("abc", "%b%"));
        assert!(lm("abc", "_b_"));
        assert!(!lm("abc", "_b"));
        assert!(lm("a%c", "a\\%c"));
        assert!(!lm("abc", "a\\%c"));
        assert!(lm("é", "_"));
        assert!(lm("", "%"));
        assert!(lm("mississippi", "%iss%ppi"));
        assert!(!lm("mississippi", "%iss%ppx"));
        let e = LikePattern::compile(b"ab\\", false).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22025", "LIKE pattern must not end with escape character")
        );
    }

    #[test]
    fn like_operator_shapes_and_ilike() {
        let col = Column::from_datums(
            DataType::Text,
            &[Datum::text("Hello"), Datum::Null, Datum::text("help")],
        );
        let pat = Datum::text("HEL%");
        let nulls = Nulls::of(&Operand::Column(&col), 3).unwrap();
        let r = like_op(
            BinaryOp::ILike,
            DataType::Text,
            Operand::Column(&col),
            Operand::Scalar(&pat, DataType::Text),
            3,
            nulls.clone(),
        )
        .unwrap();
        assert_eq!(
            (r.datum(0), r.datum(1), r.datum(2)),
            (Datum::Bool(true), Datum::Null, Datum::Bool(true))
        );
        let r = like_op(
            BinaryOp::NotLike,
            DataType::Text,
            Operand::Column(&col),
            Operand::Scalar(&pat, DataType::Text),
            3,
            nulls.clone(),
        )
        .unwrap();
        assert_eq!(r.datum(0), Datum::Bool(true));
        let pats = Column::from_datums(
            DataType::Text,
            &[Datum::text("H%"), Datum::text("x"), Datum::text("%p")],
        );
        let r = like_op(
            BinaryOp::Like,
            DataType::Text,
            Operand::Column(&col),
            Operand::Column(&pats),
            3,
            nulls,
        )
        .unwrap();
        assert_eq!(
            (r.datum(0), r.datum(2)),
            (Datum::Bool(true), Datum::Bool(true))
        );
    }

    fn rm(s: &str, p: &str) -> bool {
        Regex::compile(p, false)
            .unwrap()
            .is_match(s, &mut Vec::new())
            .unwrap()
    }

    #[test]
    fn regex_cases() {
        assert!(rm("pg_class", "^(pg_class)$"));
        assert!(!rm("pg_classes", "^(pg_class)$"));
        assert!(rm("pg_toast_123", "^pg_toast"));
        assert!(!rm("xpg_toast", "^pg_toast"));
        assert!(rm("abc", "b"));
        assert!(rm("abbbc", "ab+c"));
        assert!(rm("ac", "ab*c"));
        assert!(!rm("ac", "ab+c"));
        assert!(rm("colour", "colou?r"));
        assert!(rm("foo", "^(bar|foo)$"));
        assert!(rm("x9", "[0-9]$"));
        assert!(!rm("x9", "[^0-9]$"));
        assert!(rm("ab12", "^[[:alpha:]]+\\d{2}$"));
        assert!(rm("a.b", "a\\.b"));
        assert!(!rm("axb", "a\\.b"));
        assert!(rm("aaa", "^(a|aa)*$"));
        assert!(rm("", "^$"));
        assert!(rm("abcabc", "^(abc){2}$"));
        assert!(Regex::compile("ABC", true)
            .unwrap()
            .is_match("xabcx", &mut Vec::new())
            .unwrap());
        let e = Regex::compile("(ab", false).err().unwrap();
        assert_eq!(e.code, "2201B");
        assert!(Regex::compile("a**", false).is_err());
        // Long inputs do not recurse per character.
        let long = "x".repeat(200_000);
        assert!(rm(&long, "^x*$"));
        assert!(rm(&long, "^[a-z]+$"));
        assert!(!rm(&long, "^x*y$"));
        // Deeply repeated groups fail cleanly instead of exhausting the stack.
        let re = Regex::compile("^(xx)*$", false).unwrap();
        assert!(re.is_match(&long, &mut Vec::new()).is_err());
        assert!(re.is_match("xxxx", &mut Vec::new()).unwrap());
        // Exponential patterns hit the budget instead of hanging.
        let re = Regex::compile("^(a*)*b$", false).unwrap();
        let long = "a".repeat(40);
        assert!(
            re.is_match(&long, &mut Vec::new()).is_err()
                || !re.is_match(&long, &mut Vec::new()).unwrap()
        );
    }

    #[test]
    fn regex_operator_with_nulls() {
        let col = Column::from_datums(
            DataType::Text,
            &[Datum::text("pg_toast"), Datum::Null, Datum::text("users")],
        );
        let pat = Datum::text("^pg_");
        let nulls = Nulls::of(&Operand::Column(&col), 3).unwrap();
        let r = regex_op(
            BinaryOp::RegexNotMatch,
            Operand::Column(&col),
            Operand::Scalar(&pat, DataType::Text),
            3,
            nulls,
        )
        .unwrap();
        assert_eq!(
            (r.datum(0), r.datum(1), r.datum(2)),
            (Datum::Bool(false), Datum::Null, Datum::Bool(true))
        );
    }
}
