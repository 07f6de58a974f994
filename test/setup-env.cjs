// Runs before each test file: settings the app reads when its modules load.
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'silent';
process.env.BCRYPT_COST = process.env.BCRYPT_COST || '4';
