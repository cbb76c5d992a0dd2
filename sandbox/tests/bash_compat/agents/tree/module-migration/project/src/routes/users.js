const express = require('express');
const { UserController } = require('../controllers/user');

const router = express.Router();
const controller = new UserController();

router.get('/', controller.getUsers);

module.exports = router;
module.exports.userRoutes = router;
