const config = {
  name: "app",
  version: "1.0.0"
};

const settings = {
  debug: true,
  port: 3000
};