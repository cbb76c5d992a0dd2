// Old naming convention
const userName = 'john';
const userEmail = 'john@example.com';
const userAge = 30;

function getUserName() {
  return userName;
}

function setUserName(name) {
  userName = name;
}
