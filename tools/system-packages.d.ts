// Types of system-packages.js for the TypeScript tests that call it.
export declare function aptRunner(options?: {
	root?: boolean;
	sudo?: () => boolean;
}):
	| { cmd: string; prefix: string[]; reason?: undefined }
	| { reason: string; cmd?: undefined; prefix?: undefined };
export declare function sudoWorks(): boolean;
export declare function isRoot(): boolean;
export declare function isDebian(): boolean;
