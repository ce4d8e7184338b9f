// File names, mime types and binary property names of downloaded results, and the output item
// shared with the trigger.
import {
	binaryPropertyFor,
	extensionFromUrl,
	fileNameFor,
	resolveExtension,
	resolveMimeType,
	slug,
} from '../../../nodes/shared/transport/fileNames';
import { FILE_VALIDITY_MS, taskOutputJson } from '../../../nodes/shared/output';
import { callbackUrlWithReference } from '../../../nodes/MediaGeneration/actions/runOptions';
import { withoutSecret } from '../../../nodes/MediaGeneration/actions/generate';

describe('file naming', () => {
	it('names files <model-slug>-<task_id>-<n>.<ext>', () => {
		expect(fileNameFor('vidmodel-2.0-fast/image-to-video', 'task_9', 0, 'mp4')).toBe(
			'vidmodel-2-0-fast-image-to-video-task_9-1.mp4',
		);
		expect(fileNameFor('generate-music', 'abc', 1, 'mp3')).toBe('generate-music-abc-2.mp3');
		expect(fileNameFor(undefined, 'abc', 0, 'png')).toBe('media-abc-1.png');
	});

	it('keeps odd characters of a task_id out of the file name', () => {
		expect(fileNameFor('m', '../../etc/passwd', 0, 'png')).toBe('m--etc-passwd-1.png');
		expect(slug('  Ünïcode Model!! ')).toBe('n-code-model');
		expect(slug('***')).toBe('media');
	});

	it('binary properties: data, data_1, data_2…', () => {
		expect([0, 1, 2].map((i) => binaryPropertyFor('data', i))).toEqual([
			'data',
			'data_1',
			'data_2',
		]);
		expect(binaryPropertyFor('video', 1)).toBe('video_1');
	});
});

describe('mime types and extensions', () => {
	const file = (file_url: string, file_type?: string) => ({ file_url, file_type });

	it('prefers the Content-Type the file host sent (without parameters)', () => {
		expect(resolveMimeType('video/webm; codecs=vp9', file('https://f/x.mp4', 'video'))).toBe(
			'video/webm',
		);
	});

	it('falls back to the URL extension, then file_type, for a generic or missing Content-Type', () => {
		expect(resolveMimeType('application/octet-stream', file('https://f/x.JPG?sig=1'))).toBe(
			'image/jpeg',
		);
		expect(resolveMimeType(undefined, file('https://f/blob', 'image'))).toBe('image/png');
		expect(resolveMimeType(undefined, file('https://f/blob', 'video'))).toBe('video/mp4');
		expect(resolveMimeType(undefined, file('https://f/blob', 'audio'))).toBe('audio/mpeg');
		expect(resolveMimeType(undefined, file('https://f/blob'))).toBe('application/octet-stream');
	});

	it('extensions follow the mime type, keeping the URL’s own when it agrees', () => {
		expect(resolveExtension('image/jpeg', file('https://f/x.jpeg'))).toBe('jpeg');
		expect(resolveExtension('image/jpeg', file('https://f/x'))).toBe('jpg');
		expect(resolveExtension('audio/mpeg', file('https://f/x'))).toBe('mp3');
		expect(resolveExtension('application/octet-stream', file('https://f/x'))).toBe('bin');
		expect(extensionFromUrl('https://f/a.b/c.mp4#t=1')).toBe('mp4');
		expect(extensionFromUrl('https://f/a.exe')).toBe('');
	});
});

describe('output item', () => {
	const created = '2026-01-01T00:00:00.000Z';
	const submittedAt = Date.parse(created) + 500;
	const finishedAt = submittedAt + 61_000;

	it('a finished task: timings, files, and when the URLs stop being valid', () => {
		const json = taskOutputJson(
			{
				task_id: 't',
				status: 'finished',
				progress: 100,
				created_time: created,
				files: [{ file_url: 'https://f/v.mp4', file_type: 'video' }],
				error_message: null,
			},
			{ model: 'vidmodel-1.5-pro', reference: 'row-7', submittedAt, finishedAt },
		);
		expect(json).toEqual({
			task_id: 't',
			model: 'vidmodel-1.5-pro',
			status: 'finished',
			progress: 100,
			created_time: created,
			submitted_at: new Date(submittedAt).toISOString(),
			finished_at: new Date(finishedAt).toISOString(),
			wait_seconds: 61,
			files: [{ url: 'https://f/v.mp4', file_type: 'video', mime_type: 'video/mp4' }],
			// Creation + 24 h: generation ended somewhere between creation and finishedAt.
			expires_at: new Date(Date.parse(created) + FILE_VALIDITY_MS).toISOString(),
			error_message: null,
			reference: 'row-7',
		});
	});

	it('without an observed finish, expiry is counted from creation (the earliest it can be)', () => {
		const json = taskOutputJson({ task_id: 't', status: 'finished', created_time: created }, {});
		expect(json.expires_at).toBe(new Date(Date.parse(created) + FILE_VALIDITY_MS).toISOString());
		expect(json.finished_at).toBeNull();
		expect(json.progress).toBe(100);
	});

	it('a task still running has no finish, no expiry, and every field present', () => {
		const json = taskOutputJson(
			{ task_id: 't', status: 'processing', progress: 40 },
			{ submittedAt },
		);
		expect(json).toMatchObject({
			status: 'processing',
			progress: 40,
			finished_at: null,
			expires_at: null,
			wait_seconds: null,
			files: [],
		});
		expect(Object.keys(json).sort()).toEqual(
			[
				'created_time',
				'error_message',
				'expires_at',
				'files',
				'finished_at',
				'model',
				'progress',
				'reference',
				'status',
				'submitted_at',
				'task_id',
				'wait_seconds',
			].sort(),
		);
	});
});

describe('callback reference', () => {
	it('is appended as query parameter ref, keeping the URL’s own query', () => {
		expect(callbackUrlWithReference('https://n8n.example/webhook/abc', 'row 7')).toBe(
			'https://n8n.example/webhook/abc?ref=row+7',
		);
		expect(callbackUrlWithReference('https://n8n.example/webhook/abc?x=1', 'r&1')).toBe(
			'https://n8n.example/webhook/abc?x=1&ref=r%261',
		);
		expect(callbackUrlWithReference('https://n8n.example/webhook/abc', undefined)).toBe(
			'https://n8n.example/webhook/abc',
		);
	});

	it('the output shows the callback URL with a trigger secret masked', () => {
		expect(withoutSecret('https://n8n.example/webhook/abc?secret=s3cr3t&ref=7')).toBe(
			'https://n8n.example/webhook/abc?secret=***&ref=7',
		);
		expect(withoutSecret('https://n8n.example/webhook/abc?ref=7')).toBe(
			'https://n8n.example/webhook/abc?ref=7',
		);
	});
});
