// What a publish puts on the registry: `npm pack --json` on the built repository (into a temporary
// folder), the same tarball `npm publish` packs. Every file must match a pattern of what n8n loads (compiled
// node and credential code, codex files, the declared icons) or npm always adds (package.json,
// README, LICENSE), every such file must be there, and the size stays within a bound. A stray
// file (a docs screenshot, a demo's output, declarations, source maps, tsc's build info) fails.
// First a PNG and a declaration file are planted in dist/ the way `n8n-node build` copies them,
// and the asset pipeline (gulpfile.js) must remove them: the packed list is checked after that.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs npm and gulp under plain Node, never inside n8n (the package ships dist/ only) */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	n8n: { nodes: string[]; credentials: string[] };
};

/** Measured 2026-11-27 on the built tree: 75 files, 95 KB packed, 369 KB unpacked. */
const MAX_PACKED = 120_000;
const MAX_UNPACKED = 450_000;

const ALLOWED = [
	/^package\.json$/,
	/^README\.md$/,
	/^LICENSE$/,
	/^index\.js$/,
	/^dist\/credentials\/[A-Za-z]+\.credentials\.js$/,
	/^dist\/nodes\/[A-Za-z0-9/]+(\.node|\.operation)?\.js$/,
	/^dist\/nodes\/[A-Za-z]+\/[A-Za-z]+\.node\.json$/,
	/^dist\/nodes\/[A-Za-z]+\/[A-Za-z]+(\.dark)?\.svg$/,
];

function env(): NodeJS.ProcessEnv {
	const e: NodeJS.ProcessEnv = { ...process.env };
	for (const key of Object.keys(e)) if (/^npm_config_/i.test(key)) delete e[key];
	return e;
}

interface Packed {
	filename: string;
	size: number;
	unpackedSize: number;
	files: { path: string; size: number }[];
}

/** `npm pack` into `dir`: the tarball a publish would send, and npm's account of it. */
function pack(dir: string): Packed {
	const r = spawnSync('npm', ['pack', '--json', '--pack-destination', dir], {
		cwd: ROOT,
		env: env(),
		encoding: 'utf8',
	});
	if (r.status !== 0) throw new Error(`npm pack exited with ${r.status}\n${r.stderr}`);
	return (JSON.parse(r.stdout) as Packed[])[0];
}

/** A file of the tarball, as packed (npm may rewrite package.json on the way). */
function packedFile(tarball: string, file: string): string {
	const r = spawnSync('tar', ['-xzOf', tarball, `package/${file}`], { encoding: 'utf8' });
	if (r.status !== 0) throw new Error(`tar exited with ${r.status}\n${r.stderr}`);
	return r.stdout;
}

/** The TypeScript sources tsc compiles into dist/ (nodes/ and credentials/, no declarations). */
function tsSources(dir: string): string[] {
	return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((d) => {
		const rel = path.posix.join(dir, d.name);
		if (d.isDirectory()) return tsSources(rel);
		return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [rel] : [];
	});
}

let packed: Packed;
let paths: string[];
let tarball: string;
const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-pack-'));
afterAll(() => fs.rmSync(packDir, { recursive: true, force: true }));

beforeAll(() => {
	// What `n8n-node build` does with every PNG of the tree, and tsc with declarations.
	const strays = [
		path.join(ROOT, 'dist', 'docs', 'images', 'planted-by-a-test.png'),
		path.join(ROOT, 'dist', 'nodes', 'MediaGeneration', 'planted-by-a-test.d.ts'),
	];
	for (const f of strays) {
		fs.mkdirSync(path.dirname(f), { recursive: true });
		fs.writeFileSync(f, 'stray');
	}
	const gulp = spawnSync(
		process.execPath,
		[path.join(ROOT, 'node_modules', 'gulp', 'bin', 'gulp.js'), 'prune'],
		{
			cwd: ROOT,
			env: env(),
			encoding: 'utf8',
		},
	);
	if (gulp.status !== 0)
		throw new Error(`gulp prune exited with ${gulp.status}\n${gulp.stdout}\n${gulp.stderr}`);
	for (const f of strays) expect(fs.existsSync(f)).toBe(false);
	packed = pack(packDir);
	tarball = path.join(packDir, packed.filename);
	paths = packed.files.map((f) => f.path).sort();
	process.stdout.write(
		`npm pack: ${paths.length} files, ${packed.size} B packed, ${packed.unpackedSize} B unpacked\n`,
	);
});

test('every packed file is one n8n loads or npm always adds', () => {
	expect(paths.filter((p) => !ALLOWED.some((re) => re.test(p)))).toEqual([]);
	expect(paths.filter((p) => /\.(png|map|d\.ts|tsbuildinfo)$/.test(p))).toEqual([]);
});

test('every file n8n loads is packed: the listed nodes and credentials, their codex files and icons, all compiled code', () => {
	const listed = [...PKG.n8n.nodes, ...PKG.n8n.credentials];
	expect(listed.filter((f) => !paths.includes(f))).toEqual([]);
	for (const node of PKG.n8n.nodes) {
		const dir = path.posix.dirname(node);
		expect(paths).toContain(node.replace(/\.js$/, '.json'));
		expect(paths.filter((p) => p.startsWith(`${dir}/`) && p.endsWith('.svg'))).toHaveLength(2);
	}
	const compiled = [...tsSources('nodes'), ...tsSources('credentials')]
		.map((f) => `dist/${f.replace(/\.ts$/, '.js')}`)
		.sort();
	expect(paths.filter((p) => p.startsWith('dist/') && p.endsWith('.js'))).toEqual(compiled);
});

test('the packed package.json declares MIT and no runtime dependency, and LICENSE is the MIT licence (n8n verification)', () => {
	const packedPkg = JSON.parse(packedFile(tarball, 'package.json')) as Record<string, unknown>;
	expect(paths).toContain('package.json');
	expect(paths).toContain('LICENSE');
	expect(packedPkg.license).toBe('MIT');
	expect(packedPkg.dependencies ?? {}).toEqual({});
	expect(packedFile(tarball, 'LICENSE')).toMatch(/^MIT License\n/);
});

test(`the tarball stays small: at most ${MAX_PACKED} B packed, ${MAX_UNPACKED} B unpacked`, () => {
	expect(packed.size).toBeLessThanOrEqual(MAX_PACKED);
	expect(packed.unpackedSize).toBeLessThanOrEqual(MAX_UNPACKED);
});
