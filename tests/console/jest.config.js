module.exports = { ...require('../../jest.preset.js'), testTimeout: 180_000 };
