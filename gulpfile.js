// The asset pipeline, run after `n8n-node build` (which compiles TypeScript and copies icons
// verbatim but leaves out the codex files). It checks what n8n would otherwise only reveal in
// the editor: every node listed in package.json has its codex file and a light and a dark icon,
// the codex names the node type n8n will register, and the icons are valid, square SVGs. Then it
// writes the codex files and minified icons into dist/, and prunes dist/ to what n8n loads:
// `n8n-node build` copies every PNG and SVG of the tree (the docs screenshots the editor layer
// retakes, a demo's output) and tsc adds declarations, source maps, its build info and a copy of
// package.json, none of which n8n reads. package.json's "files" publishes dist/ as it is left
// here, so this is what the tarball holds (test/unit/release/package-contents.test.ts).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { series } = require('gulp');

const ROOT = __dirname;
const pkg = require('./package.json');

class AssetError extends Error {}

function nodeEntries() {
	return pkg.n8n.nodes.map((distFile) => {
		const rel = path.relative('dist', distFile).replace(/\.js$/, '');
		const srcDir = path.join(ROOT, path.dirname(rel));
		const base = path.basename(rel); // e.g. MediaGeneration.node
		return { distFile: path.join(ROOT, distFile), srcDir, base, rel };
	});
}

function loadDescription(distFile) {
	if (!fs.existsSync(distFile)) {
		throw new AssetError(`${path.relative(ROOT, distFile)} is missing: run n8n-node build first`);
	}
	const mod = require(distFile);
	const NodeClass = Object.values(mod).find((v) => typeof v === 'function');
	if (!NodeClass) throw new AssetError(`${distFile} exports no node class`);
	return new NodeClass().description;
}

function iconFiles(description) {
	const icon = description.icon;
	if (!icon || typeof icon !== 'object' || !icon.light || !icon.dark) {
		throw new AssetError(`node ${description.name} must declare a light and a dark icon`);
	}
	return [icon.light, icon.dark].map((ref) => {
		if (!ref.startsWith('file:')) throw new AssetError(`icon ${ref} must be a file: reference`);
		return ref.slice('file:'.length);
	});
}

/** The source files of the credentials' icons, if they declare any. */
function credentialIconSources() {
	const sources = [];
	for (const credFile of pkg.n8n.credentials) {
		const mod = require(path.join(ROOT, credFile));
		const Cred = Object.values(mod).find((v) => typeof v === 'function');
		const icon = Cred && new Cred().icon;
		if (icon && typeof icon === 'object') {
			const srcDir = path.join(ROOT, path.dirname(path.relative('dist', credFile)));
			for (const ref of [icon.light, icon.dark])
				sources.push(path.resolve(srcDir, ref.replace(/^file:/, '')));
		}
	}
	return sources;
}

/** Validates an SVG icon and returns it minified (comments and layout whitespace removed). */
function checkedSvg(file) {
	const text = fs.readFileSync(file, 'utf8');
	const open = text.match(/<svg\b[^>]*>/);
	if (!open || !/<\/svg>\s*$/.test(text)) throw new AssetError(`${file} is not an SVG document`);
	const viewBox = open[0].match(/viewBox="([\d.\s-]+)"/);
	if (!viewBox) throw new AssetError(`${file}: the <svg> element needs a viewBox`);
	const [, , w, h] = viewBox[1].trim().split(/\s+/).map(Number);
	if (!(w > 0) || w !== h)
		throw new AssetError(`${file}: n8n shows icons square; viewBox is ${w}x${h}`);
	if (/<script\b|\son\w+=/i.test(text))
		throw new AssetError(`${file}: scripts are not allowed in icons`);
	return text
		.replace(/<!--[\s\S]*?-->/g, '')
		.replace(/>\s+</g, '><')
		.replace(/\s{2,}/g, ' ')
		.trim();
}

async function icons() {
	let count = 0;
	let saved = 0;
	const seen = new Set();
	const refs = [];
	for (const entry of nodeEntries()) {
		const description = loadDescription(entry.distFile);
		for (const ref of iconFiles(description)) refs.push(path.resolve(entry.srcDir, ref));
	}
	refs.push(...credentialIconSources());
	for (const src of refs) {
		if (seen.has(src)) continue;
		seen.add(src);
		if (!fs.existsSync(src))
			throw new AssetError(`icon ${path.relative(ROOT, src)} does not exist`);
		const min = checkedSvg(src);
		const dest = path.join(ROOT, 'dist', path.relative(ROOT, src));
		fs.mkdirSync(path.dirname(dest), { recursive: true });
		fs.writeFileSync(dest, min);
		count++;
		saved += fs.statSync(src).size - Buffer.byteLength(min);
	}
	console.log(`icons: ${count} checked and minified (${saved} bytes saved)`);
}

async function codex() {
	for (const entry of nodeEntries()) {
		const description = loadDescription(entry.distFile);
		const src = path.join(entry.srcDir, `${entry.base}.json`);
		if (!fs.existsSync(src))
			throw new AssetError(`codex file ${path.relative(ROOT, src)} is missing`);
		const data = JSON.parse(fs.readFileSync(src, 'utf8'));
		const expected = `${pkg.name}.${description.name}`;
		if (data.node !== expected) {
			throw new AssetError(
				`${path.relative(ROOT, src)}: "node" is ${data.node}, n8n registers ${expected}`,
			);
		}
		if (!Array.isArray(data.categories) || data.categories.length === 0) {
			throw new AssetError(`${path.relative(ROOT, src)}: at least one category is needed`);
		}
		const dest = path.join(ROOT, 'dist', `${entry.rel}.json`);
		fs.writeFileSync(dest, JSON.stringify(data));
	}
	console.log(`codex: ${pkg.n8n.nodes.length} node files written`);
}

/** Files of dist/ that n8n loads: compiled sources, and what icons() and codex() wrote. */
function keptFiles() {
	const kept = new Set();
	for (const dir of ['nodes', 'credentials']) {
		for (const file of walk(path.join(ROOT, 'dist', dir))) {
			const rel = path.relative(path.join(ROOT, 'dist'), file);
			if (
				rel.endsWith('.js') &&
				!rel.endsWith('.d.js') &&
				fs.existsSync(path.join(ROOT, rel.replace(/\.js$/, '.ts')))
			) {
				kept.add(file);
			}
		}
	}
	for (const entry of nodeEntries()) {
		kept.add(path.join(ROOT, 'dist', `${entry.rel}.json`));
		for (const ref of iconFiles(loadDescription(entry.distFile))) {
			kept.add(path.join(ROOT, 'dist', path.relative(ROOT, path.resolve(entry.srcDir, ref))));
		}
	}
	for (const src of credentialIconSources())
		kept.add(path.join(ROOT, 'dist', path.relative(ROOT, src)));
	return kept;
}

function walk(dir) {
	if (!fs.existsSync(dir)) return [];
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
		const full = path.join(dir, d.name);
		return d.isDirectory() ? walk(full) : [full];
	});
}

async function prune() {
	const kept = keptFiles();
	const removed = {};
	let bytes = 0;
	for (const file of walk(path.join(ROOT, 'dist'))) {
		if (kept.has(file)) continue;
		const kind =
			/\.d\.ts$|\.js\.map$/.exec(file)?.[0] ?? (path.extname(file) || path.basename(file));
		removed[kind] = (removed[kind] || 0) + 1;
		bytes += fs.statSync(file).size;
		fs.rmSync(file);
	}
	removeEmptyDirs(path.join(ROOT, 'dist'));
	const what = Object.entries(removed)
		.map(([kind, n]) => `${n} ${kind}`)
		.join(', ');
	console.log(`prune: ${kept.size} files kept; removed ${what || 'nothing'} (${bytes} bytes)`);
}

function removeEmptyDirs(dir) {
	for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
		if (d.isDirectory()) removeEmptyDirs(path.join(dir, d.name));
	}
	if (fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
}

async function verify() {
	const listed = [...pkg.n8n.credentials, ...pkg.n8n.nodes];
	const missing = listed.filter((f) => !fs.existsSync(path.join(ROOT, f)));
	if (missing.length)
		throw new AssetError(
			`package.json lists files that the build did not make: ${missing.join(', ')}`,
		);
	console.log(`verify: ${listed.length} files listed in package.json are in dist/`);
}

exports.icons = icons;
exports.codex = codex;
exports.verify = verify;
exports.prune = prune;
exports.default = series(verify, icons, codex, prune);
