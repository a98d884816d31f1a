// Renders conversations with Hugging Face's own Jinja engine (@huggingface/jinja), the reference
// specd's chat templates must equal character for character (tests/chat_template.cmake):
//   node render_chat.js TOKENIZER_CONFIG CONVERSATIONS_JSON > RENDERS_JSONL
// One line per conversation, rendered with add_generation_prompt as a server does: its JSON string,
// or {"error": message} where the template refuses it (raise_exception), which specd must refuse too.
const fs = require('fs');
const { Template } = require('@huggingface/jinja');

const [configPath, conversationsPath] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const token = (t) => (t && typeof t === 'object' ? t.content : t) ?? '';
const template = new Template(config.chat_template);
for (const messages of JSON.parse(fs.readFileSync(conversationsPath, 'utf8'))) {
  let line;
  try {
    line = template.render({
      messages,
      bos_token: token(config.bos_token),
      eos_token: token(config.eos_token),
      add_generation_prompt: true,
    });
  } catch (e) {
    line = { error: e.message };
  }
  process.stdout.write(JSON.stringify(line) + '\n');
}
