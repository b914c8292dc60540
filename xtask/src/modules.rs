//! `cargo xtask modules`: the module-layering check. Inside every crate, no import circle
//! may join more than two source files.
//!
//! Each crate's files are parsed with `syn`, starting at its roots (`src/lib.rs`,
//! `src/main.rs`, `src/bin/*`) and following `mod` declarations the way rustc does
//! (`foo.rs`, `foo/mod.rs`, `#[path]` and `#[cfg_attr(…, path = …)]`, inline `mod x { }`
//! blocks, which belong to their file). Every path that names something of the crate —
//! `use crate::…`, `use super::…`, `self::…`, a child module's name, a `use` alias of a
//! module, the same paths in expressions, types and macro bodies — is resolved to the
//! file that defines the item, through re-exports, and becomes an edge of a file graph.
//! Its strongly connected components (Tarjan) of more than two files fail the check,
//! each printed as a closed walk through its files and the items every edge imports, so
//! a reader sees where to cut it. A pair of files that import each other (a module and
//! its sibling test file, say) passes. Test-only modules count like any other.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Component, Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The largest import circle a crate may have, in files.
const MAX_CIRCLE: usize = 2;

/// How deep re-exports are followed before a name is taken to live where it was found.
const MAX_REEXPORT_DEPTH: usize = 16;

/// Checks every crate under `crates/` and `xtask`.
pub fn check(workspace: &Path) -> Result<(), String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace.join("crates"))
        .map_err(|e| format!("modules: cannot list crates/: {e}"))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("src").is_dir())
        .collect();
    dirs.sort();
    dirs.push(workspace.join("xtask"));
    let mut failed = Vec::new();
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let sources = Sources::read(&dir.join("src"))?;
        let report = analyse(&sources).map_err(|e| format!("modules: {name}: {e}"))?;
        let largest = report.components.iter().map(Vec::len).max().unwrap_or(1);
        println!(
            "modules: {name}: {} files, largest import circle {largest} file{}",
            report.files,
            if largest == 1 { "" } else { "s" }
        );
        let over = report.over_limit();
        for component in &over {
            println!("{}", report.describe(component));
        }
        if !over.is_empty() {
            failed.push(name);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "modules: import circles of more than {MAX_CIRCLE} files in {}: move the items \
             they share into a leaf module both sides import",
            failed.join(", ")
        ))
    }
}

/// A crate's source files by path relative to its `src/`.
struct Sources {
    files: BTreeMap<PathBuf, String>,
}

impl Sources {
    /// Every `.rs` file under `src`.
    fn read(src: &Path) -> Result<Self, String> {
        let mut files = BTreeMap::new();
        let mut pending = vec![src.to_owned()];
        while let Some(dir) = pending.pop() {
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| format!("modules: cannot list {}: {e}", dir.display()))?;
            for entry in entries {
                let path = entry
                    .map_err(|e| format!("modules: cannot list {}: {e}", dir.display()))?
                    .path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    let text = std::fs::read_to_string(&path)
                        .map_err(|e| format!("modules: cannot read {}: {e}", path.display()))?;
                    let relative = path.strip_prefix(src).unwrap_or(&path).to_owned();
                    files.insert(relative, text);
                }
            }
        }
        Ok(Self { files })
    }

    /// The crate roots: the library, the binary, each `src/bin` binary.
    fn roots(&self) -> Vec<PathBuf> {
        self.files
            .keys()
            .filter(|path| {
                let parts: Vec<_> = path.iter().collect();
                match parts.as_slice() {
                    [file] => *file == "lib.rs" || *file == "main.rs",
                    [bin, _] => *bin == "bin",
                    [bin, _, main] => *bin == "bin" && *main == "main.rs",
                    _ => false,
                }
            })
            .cloned()
            .collect()
    }
}

/// What the check found in one crate.
struct Report {
    /// Files reached from the roots.
    files: usize,
    /// Strongly connected components of the file graph, each sorted, largest first.
    components: Vec<Vec<String>>,
    /// Every edge of the graph and the names it imports.
    edges: BTreeMap<(String, String), BTreeSet<String>>,
}

impl Report {
    /// The components the check fails on: more than [`MAX_CIRCLE`] files.
    fn over_limit(&self) -> Vec<&Vec<String>> {
        self.components
            .iter()
            .filter(|c| c.len() > MAX_CIRCLE)
            .collect()
    }

    /// A component as a closed walk through all its files, then each of its edges.
    fn describe(&self, component: &[String]) -> String {
        let members: BTreeSet<&str> = component.iter().map(String::as_str).collect();
        let next = |from: &str| -> Vec<&str> {
            self.edges
                .range((from.to_owned(), String::new())..)
                .take_while(|((a, _), _)| a == from)
                .map(|((_, b), _)| b.as_str())
                .filter(|b| members.contains(b))
                .collect()
        };
        // Shortest path inside the component, by breadth-first search.
        let path = |from: &str, to: &str| -> Vec<String> {
            let mut came: BTreeMap<&str, &str> = BTreeMap::new();
            let mut queue = VecDeque::from([from]);
            while let Some(at) = queue.pop_front() {
                for b in next(at) {
                    if b != from && !came.contains_key(b) {
                        came.insert(b, at);
                        queue.push_back(b);
                    }
                }
                if came.contains_key(to) {
                    break;
                }
            }
            let mut steps = vec![to.to_owned()];
            let mut at = to;
            while let Some(prev) = came.get(at) {
                if *prev == from {
                    break;
                }
                steps.push((*prev).to_owned());
                at = prev;
            }
            steps.reverse();
            steps
        };
        let start = component[0].as_str();
        let mut walk = vec![start.to_owned()];
        let mut seen: BTreeSet<String> = BTreeSet::from([start.to_owned()]);
        for target in component {
            if seen.contains(target) {
                continue;
            }
            let from = walk.last().cloned().unwrap_or_default();
            for step in path(&from, target) {
                seen.insert(step.clone());
                walk.push(step);
            }
        }
        let from = walk.last().cloned().unwrap_or_default();
        walk.extend(path(&from, start));
        let mut text = format!(
            "  import circle of {} files: {}\n",
            component.len(),
            walk.join(" → ")
        );
        for ((a, b), names) in &self.edges {
            if members.contains(a.as_str()) && members.contains(b.as_str()) {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                text.push_str(&format!("    {a} → {b}: {}\n", names.join(", ")));
            }
        }
        text.pop();
        text
    }
}

/// One module: a file, or an inline `mod x { }` inside one.
struct Module {
    name: String,
    parent: Option<usize>,
    /// The file its items are written in.
    file: PathBuf,
    children: Vec<usize>,
    /// Names of the items it defines (not modules, not `use`s).
    items: BTreeSet<String>,
    /// Its module-level `use`s: the local name (`None` for a glob) and the path.
    uses: Vec<(Option<String>, Vec<String>)>,
    /// Every path its code names (module-level `use`s included), whether it is a `use`.
    refs: Vec<(Vec<String>, RefKind)>,
}

/// How a path was named, which decides whether naming a module is an edge.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RefKind {
    /// `use a::b;`: naming a module only brings its name into scope.
    Use,
    /// `use a::*;`: everything of the module, so an edge to it.
    Glob,
    /// A path in code.
    Code,
}

/// Where a module's `mod x;` children are looked for.
struct Dirs {
    /// For `mod x;`: `<dir>/x.rs` or `<dir>/x/mod.rs`.
    children: PathBuf,
    /// For `#[path = "p"] mod x;`: `<base>/p`.
    path_base: PathBuf,
}

/// The module tree of every root of a crate.
struct Tree<'a> {
    sources: &'a Sources,
    modules: Vec<Module>,
}

/// Builds the module tree and the file graph of one crate.
fn analyse(sources: &Sources) -> Result<Report, String> {
    let mut tree = Tree {
        sources,
        modules: Vec::new(),
    };
    let roots = sources.roots();
    if roots.is_empty() {
        return Err("no lib.rs, main.rs or bin/ under src/".to_owned());
    }
    for root in roots {
        let dir = root.parent().map(Path::to_owned).unwrap_or_default();
        let dirs = Dirs {
            children: dir.clone(),
            path_base: dir,
        };
        tree.load_file(None, "crate".to_owned(), &root, &dirs)?;
    }
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (id, module) in tree.modules.iter().enumerate() {
        for (path, kind) in &module.refs {
            let Some(targets) = tree.resolve_ref(id, path, *kind) else {
                continue;
            };
            for target in targets {
                let to = &tree.modules[target].file;
                if *to != module.file {
                    edges
                        .entry((display(&module.file), display(to)))
                        .or_default()
                        .insert(path.join("::"));
                }
            }
        }
    }
    let files: BTreeSet<String> = tree.modules.iter().map(|m| display(&m.file)).collect();
    let mut components = strongly_connected(&files, &edges);
    components.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    Ok(Report {
        files: files.len(),
        components,
        edges,
    })
}

/// A path relative to `src/`, with `/` between its parts on every OS.
fn display(path: &Path) -> String {
    path.iter()
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `path = "…"` values of a `mod`'s attributes: `#[path]` itself, or every
/// `#[cfg_attr(…, path = "…")]` (each a file the module is on some target).
fn path_attributes(attrs: &[syn::Attribute]) -> (Option<String>, Vec<String>) {
    let mut plain = None;
    let mut conditional = Vec::new();
    for attr in attrs {
        if attr.path().is_ident("path") {
            if let syn::Meta::NameValue(nv) = &attr.meta
                && let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
            {
                plain = Some(s.value());
            }
        } else if attr.path().is_ident("cfg_attr")
            && let syn::Meta::List(list) = &attr.meta
        {
            let mut tokens = list.tokens.clone().into_iter().peekable();
            while let Some(token) = tokens.next() {
                let TokenTree::Ident(ident) = &token else {
                    continue;
                };
                if ident != "path"
                    || !matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '=')
                {
                    continue;
                }
                tokens.next();
                if let Some(TokenTree::Literal(lit)) = tokens.next()
                    && let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string())
                {
                    conditional.push(s.value());
                }
            }
        }
    }
    (plain, conditional)
}

impl Tree<'_> {
    /// Parses `file` as module `name` under `parent`.
    fn load_file(
        &mut self,
        parent: Option<usize>,
        name: String,
        file: &Path,
        dirs: &Dirs,
    ) -> Result<(), String> {
        let Some(text) = self.sources.files.get(file) else {
            return Err(format!("{} is declared but missing", display(file)));
        };
        let parsed =
            syn::parse_file(text).map_err(|e| format!("cannot parse {}: {e}", display(file)))?;
        let id = self.add_module(parent, name, file);
        self.load_items(id, &parsed.items, dirs)
    }

    fn add_module(&mut self, parent: Option<usize>, name: String, file: &Path) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            name,
            parent,
            file: file.to_owned(),
            children: Vec::new(),
            items: BTreeSet::new(),
            uses: Vec::new(),
            refs: Vec::new(),
        });
        if let Some(parent) = parent {
            self.modules[parent].children.push(id);
        }
        id
    }

    /// Records a module's items, uses and paths; loads its child modules.
    fn load_items(&mut self, id: usize, items: &[syn::Item], dirs: &Dirs) -> Result<(), String> {
        let mut paths = PathCollector::default();
        for item in items {
            match item {
                syn::Item::Mod(module) => self.load_mod(id, module, dirs)?,
                syn::Item::Use(item) => {
                    for (name, path) in flatten_use(&item.tree) {
                        let kind = if name.is_some() {
                            RefKind::Use
                        } else {
                            RefKind::Glob
                        };
                        self.modules[id].refs.push((path.clone(), kind));
                        self.modules[id].uses.push((name, path));
                    }
                    for attr in &item.attrs {
                        paths.visit_attribute(attr);
                    }
                }
                other => {
                    if let Some(name) = item_name(other) {
                        self.modules[id].items.insert(name);
                    }
                    paths.visit_item(other);
                }
            }
        }
        self.modules[id].refs.extend(paths.paths);
        Ok(())
    }

    /// A `mod` item: inline, or one or more files (one per `cfg_attr` path).
    fn load_mod(
        &mut self,
        parent: usize,
        module: &syn::ItemMod,
        dirs: &Dirs,
    ) -> Result<(), String> {
        let name = module.ident.to_string();
        if let Some((_, items)) = &module.content {
            let file = self.modules[parent].file.clone();
            let id = self.add_module(Some(parent), name.clone(), &file);
            let inner = dirs.children.join(&name);
            let inner_dirs = Dirs {
                children: inner.clone(),
                path_base: inner,
            };
            return self.load_items(id, items, &inner_dirs);
        }
        let (plain, conditional) = path_attributes(&module.attrs);
        // A file named by `#[path]` owns its directory, as `mod.rs` does.
        let mut files: Vec<(PathBuf, bool)> = Vec::new();
        match plain {
            Some(path) => files.push((normalize(&dirs.path_base.join(path)), true)),
            None => {
                let flat = dirs.children.join(format!("{name}.rs"));
                let nested = dirs.children.join(&name).join("mod.rs");
                if self.sources.files.contains_key(&flat) {
                    files.push((flat, false));
                } else {
                    files.push((nested, true));
                }
            }
        }
        for path in conditional {
            files.push((normalize(&dirs.path_base.join(path)), true));
        }
        for (file, owns_dir) in files {
            let dir = file.parent().map(Path::to_owned).unwrap_or_default();
            let children = if owns_dir {
                dir.clone()
            } else {
                dir.join(&name)
            };
            let child_dirs = Dirs {
                children,
                path_base: dir,
            };
            self.load_file(Some(parent), name.clone(), &file, &child_dirs)?;
        }
        Ok(())
    }

    fn root(&self, mut id: usize) -> usize {
        while let Some(parent) = self.modules[id].parent {
            id = parent;
        }
        id
    }

    /// The modules a path reference depends on, or `None` when it names nothing of
    /// the crate (std, another crate, a local name).
    fn resolve_ref(&self, from: usize, path: &[String], kind: RefKind) -> Option<Vec<usize>> {
        match self.resolve(from, path, 0)? {
            // Only the later uses of the alias depend on the module's items.
            Found::Module(_) if kind == RefKind::Use => None,
            Found::Module(modules) | Found::Item(modules) => Some(modules),
        }
    }

    /// Resolves `path` as written in module `from`.
    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Option<Found> {
        let (first, rest) = path.split_first()?;
        let start: Vec<usize> = match first.as_str() {
            "crate" => vec![self.root(from)],
            "self" => vec![from],
            "super" => {
                let mut at = self.modules[from].parent?;
                let mut rest = rest;
                while let Some((next, tail)) = rest.split_first() {
                    if next != "super" {
                        break;
                    }
                    at = self.modules[at].parent?;
                    rest = tail;
                }
                return self.walk(vec![at], rest, depth);
            }
            _ => {
                // A relative path: a child module or a `use` alias of this module; a
                // lone name is an item the module's own `use`s already account for.
                if rest.is_empty() && depth == 0 {
                    return None;
                }
                let found = self.lookup(from, first, depth)?;
                return match found {
                    Found::Module(modules) => self.walk(modules, rest, depth),
                    item => Some(item),
                };
            }
        };
        self.walk(start, rest, depth)
    }

    /// Follows `rest` down from the modules `at`.
    fn walk(&self, mut at: Vec<usize>, rest: &[String], depth: usize) -> Option<Found> {
        for name in rest {
            if name == "self" {
                continue;
            }
            let mut modules = Vec::new();
            let mut items = Vec::new();
            for &module in &at {
                match self.lookup(module, name, depth) {
                    Some(Found::Module(found)) => modules.extend(found),
                    Some(Found::Item(found)) => items.extend(found),
                    None => items.push(module),
                }
            }
            if !items.is_empty() {
                return Some(Found::Item(items));
            }
            at = modules;
        }
        Some(Found::Module(at))
    }

    /// What `name` means inside `module`: a child module, an item it defines, or what a
    /// `use` of it (named, then glob) brings in.
    fn lookup(&self, module: usize, name: &str, depth: usize) -> Option<Found> {
        let m = &self.modules[module];
        let children: Vec<usize> = m
            .children
            .iter()
            .copied()
            .filter(|&c| self.modules[c].name == name)
            .collect();
        if !children.is_empty() {
            return Some(Found::Module(children));
        }
        if m.items.contains(name) {
            return Some(Found::Item(vec![module]));
        }
        if depth >= MAX_REEXPORT_DEPTH {
            return None;
        }
        for (alias, path) in &m.uses {
            if alias.as_deref() == Some(name) {
                return self.resolve(module, path, depth + 1);
            }
        }
        for (alias, path) in &m.uses {
            if alias.is_some() {
                continue;
            }
            let Some(Found::Module(globbed)) = self.resolve(module, path, depth + 1) else {
                continue;
            };
            for g in globbed {
                if g != module
                    && let Some(found) = self.lookup(g, name, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        None
    }
}

/// What a path resolves to.
enum Found {
    /// One or more modules (several when a module has a file per target).
    Module(Vec<usize>),
    /// An item, in the modules that define it.
    Item(Vec<usize>),
}

/// The name a non-`mod`, non-`use` item defines.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

/// A `use` tree as (local name, path) pairs; a glob has no local name.
fn flatten_use(tree: &syn::UseTree) -> Vec<(Option<String>, Vec<String>)> {
    let mut out = Vec::new();
    flatten_into(tree, &mut Vec::new(), &mut out);
    out
}

fn flatten_into(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Option<String>, Vec<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_into(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.push((Some(last.clone()), prefix.clone()));
                }
            } else {
                let mut path = prefix.clone();
                path.push(name.clone());
                out.push((Some(name), path));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            let name = r.ident.to_string();
            if name != "self" {
                path.push(name);
            }
            out.push((Some(r.rename.to_string()), path));
        }
        syn::UseTree::Glob(_) => out.push((None, prefix.clone())),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                flatten_into(item, prefix, out);
            }
        }
    }
}

/// Every path in a module's code: expressions, types, patterns, `use`s inside bodies,
/// and `crate::`/`super::`/`self::` paths inside macro invocations.
#[derive(Default)]
struct PathCollector {
    paths: Vec<(Vec<String>, RefKind)>,
}

impl<'ast> Visit<'ast> for PathCollector {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.paths.push((segments, RefKind::Code));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        for (name, path) in flatten_use(&item.tree) {
            let kind = if name.is_some() {
                RefKind::Code
            } else {
                RefKind::Glob
            };
            self.paths.push((path, kind));
        }
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A module inside a function body is out of reach of `mod` resolution and
        // does not appear in this codebase.
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.scan_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

impl PathCollector {
    /// Finds `crate::a::b`, `super::…` and `self::…` in a macro's tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(group) => self.scan_tokens(group.stream()),
                TokenTree::Ident(ident)
                    if (ident == "crate" || ident == "super" || ident == "self")
                        && is_path_sep(&tokens, i + 1) =>
                {
                    let mut path = vec![ident.to_string()];
                    let mut j = i + 1;
                    while is_path_sep(&tokens, j) {
                        let Some(TokenTree::Ident(next)) = tokens.get(j + 2) else {
                            break;
                        };
                        path.push(next.to_string());
                        j += 3;
                    }
                    if path.len() > 1 {
                        self.paths.push((path, RefKind::Code));
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// Whether `tokens[at..]` starts with `::`.
fn is_path_sep(tokens: &[TokenTree], at: usize) -> bool {
    matches!(
        (tokens.get(at), tokens.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':'
    )
}

/// Tarjan's strongly connected components of the file graph.
fn strongly_connected(
    files: &BTreeSet<String>,
    edges: &BTreeMap<(String, String), BTreeSet<String>>,
) -> Vec<Vec<String>> {
    let names: Vec<&String> = files.iter().collect();
    let index_of: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (a, b) in edges.keys() {
        if let (Some(&a), Some(&b)) = (index_of.get(a.as_str()), index_of.get(b.as_str())) {
            next[a].push(b);
        }
    }
    let mut state = Tarjan {
        next: &next,
        index: vec![None; names.len()],
        low: vec![0; names.len()],
        on_stack: vec![false; names.len()],
        stack: Vec::new(),
        counter: 0,
        components: Vec::new(),
    };
    for v in 0..names.len() {
        if state.index[v].is_none() {
            state.connect(v);
        }
    }
    state
        .components
        .into_iter()
        .map(|component| {
            let mut files: Vec<String> = component.into_iter().map(|i| names[i].clone()).collect();
            files.sort();
            files
        })
        .collect()
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn connect(&mut self, v: usize) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.next[v] {
            match self.index[w] {
                None => {
                    self.connect(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

#[cfg(test)]
#[path = "modules_tests.rs"]
mod tests;
