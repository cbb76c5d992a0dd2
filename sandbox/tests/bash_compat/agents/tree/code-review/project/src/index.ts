import express from 'express';
// TODO: Add error handling
// FIXME: Port should be from env
const app = express();
app.listen(3000);
