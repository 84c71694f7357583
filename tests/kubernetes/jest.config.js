module.exports = { ...require('../../jest.preset.js'), testTimeout: 300_000 };
