// n8n loads this package through the `n8n` block of package.json (dist/ files), not through
// this entry. It exists so that `require('n8n-nodes-media-generation')` in tooling resolves to
// the same built node and credential classes n8n would load.
module.exports = {
	get MediaGenerationApi() {
		return require('./dist/credentials/MediaGenerationApi.credentials').MediaGenerationApi;
	},
	get MediaGeneration() {
		return require('./dist/nodes/MediaGeneration/MediaGeneration.node').MediaGeneration;
	},
	get MediaGenerationTrigger() {
		return require('./dist/nodes/MediaGenerationTrigger/MediaGenerationTrigger.node')
			.MediaGenerationTrigger;
	},
};
