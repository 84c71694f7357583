// One suite that starts a whole installation and injects faults one after another: minutes, not seconds.
module.exports = { ...require('../../jest.preset.js'), testTimeout: 600_000 };
