export function renderUserProfile(user: { name: string; bio: string }) {
  // XSS vulnerability: innerHTML with user data
  document.getElementById('profile').innerHTML = `
    <h1>${user.name}</h1>
    <p>${user.bio}</p>
  `;
}

export function safeRender(user: { name: string }) {
  // Safe: using textContent
  document.getElementById('name').textContent = user.name;
}
