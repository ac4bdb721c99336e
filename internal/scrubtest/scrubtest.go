// Package scrubtest holds the credential formats that package scrub must recognize and the
// ordinary lines it must leave alone, for the scrubber's own tests and the end-to-end tests that
// plant every format in every place observer stores text.
//
// The credentials are made up: random characters in each format's shape, built at run time from a
// fixed seed, so that every run (and every process of a test) sees the same ones and no literal in
// this file looks like a live key to a secret scanner.
package scrubtest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Format is one kind of credential, as it shows up in a line agents read or write.
type Format struct {
	Name string
	// Kind is the scrubber's mark the line must carry: "[REDACTED:<Kind>]".
	Kind string
	// Line holds the credential in its usual context (a command, a config line, an error).
	Line string
	// Secrets are the parts of Line that must not survive scrubbing.
	Secrets []string
}

const (
	upper    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower    = "abcdefghijklmnopqrstuvwxyz"
	digits   = "0123456789"
	alnum    = upper + lower + digits
	hexLower = digits + "abcdef"
	b64      = alnum + "+/"
	b64url   = alnum + "_-"
)

// gen draws the random parts of the formats.
type gen struct{ r *rand.Rand }

func (g gen) s(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[g.r.IntN(len(alphabet))])
	}
	return b.String()
}

// discord returns a Discord bot token: the bot's id (a snowflake of digits digits) in base64,
// a time stamp and an HMAC.
func (g gen) discord(digits_ int) string {
	id := g.s("123456789", 1) + g.s(digits, digits_-1)
	return base64.RawStdEncoding.EncodeToString([]byte(id)) + "." + g.s(b64url, 6) + "." + g.s(b64url, 38)
}

// pem returns n lines of 64 base64 characters, the body of a PEM block.
func (g gen) pem(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = g.s(b64, 64)
	}
	return lines
}

// Formats returns the credential formats, the same ones at every call.
func Formats() []Format {
	g := gen{rand.New(rand.NewPCG(13, 2026))}
	var fs []Format
	add := func(name, kind, line string, secrets ...string) {
		fs = append(fs, Format{Name: name, Kind: kind, Line: line, Secrets: secrets})
	}
	one := func(name, kind, before, secret, after string) { add(name, kind, before+secret+after, secret) }

	// Model providers.
	one("anthropic api key", "anthropic-key", "401 invalid x-api-key ", "sk-ant-"+"api03-"+g.s(b64url, 86)+"AA", " (check the key)")
	one("anthropic admin key", "anthropic-key", "using admin key ", "sk-ant-"+"admin01-"+g.s(b64url, 86)+"AA", " for usage reports")
	one("openai legacy key", "openai-key", "Incorrect API key provided: ", "sk-"+g.s(alnum, 48), ".")
	one("openai project key", "openai-key", "export OPENAI_KEY ", "sk-"+"proj-"+g.s(b64url, 120), "")
	one("openai service account key", "openai-key", "svc key ", "sk-"+"svcacct-"+g.s(b64url, 100), " rotated")

	// Clouds.
	one("aws access key id", "aws-access-key", "aws configure set aws_access_key_id ", "AKIA"+g.s(upper+digits, 16), "")
	one("aws temporary key id", "aws-access-key", "AccessKeyId: ", "ASIA"+g.s(upper+digits, 16), "")
	one("aws secret access key", "secret", "aws_secret_access_key = ", g.s(b64, 40), "")
	one("aws session token", "secret", "aws_session_token = ", "IQoJb3JpZ2luX2Vj"+g.s(b64, 300), "")
	one("aws session token set by the cli", "aws-session-token", "aws configure set aws_session_token ", "IQoJb3JpZ2luX2Vj"+g.s(b64, 600), "")
	one("aws sts session token json", "aws-session-token", `{"Credentials": {"SessionToken": "`, "FwoGZXIvYXdzE"+g.s(b64, 280), `", "Expiration": "2025-01-01T00:00:00Z"}}`)
	one("aws secret access key set by the cli", "cli-password", "aws configure set aws_secret_access_key ", g.s(b64, 40), " --profile ci")
	one("aws presigned url", "url-signature", "curl 'https://bucket.s3.amazonaws.com/o.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20250101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=",
		g.s(hexLower, 64), "'")
	gcpKey := g.pem(4)
	add("gcp service account json", "private-key",
		`{"type": "service_account", "project_id": "demo-proj", "private_key_id": "`+g.s(hexLower, 40)+`", "private_key": "-----BEGIN PRIVATE KEY-----\n`+
			strings.Join(gcpKey, `\n`)+`\n-----END PRIVATE KEY-----\n", "client_email": "ci@demo-proj.iam.gserviceaccount.com"}`,
		gcpKey...)
	one("google api key", "google-key", "https://maps.googleapis.com/maps/api/geocode/json?address=x&key=", "AIza"+g.s(b64url, 35), "")
	one("google oauth client secret", "google-oauth", "client secret is ", "GOCSPX-"+g.s(b64url, 28), "")
	one("google oauth access token", "google-oauth", "gcloud printed ", "ya29."+g.s(b64url, 150), "")
	one("azure storage connection string", "secret", "DefaultEndpointsProtocol=https;AccountName=demoacct;AccountKey=", g.s(b64, 86)+"==", ";EndpointSuffix=core.windows.net")
	one("azure service bus connection string", "secret",
		"Endpoint=sb://demo-ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=", g.s(b64, 43)+"=", "")
	one("azure sas url", "url-signature", "https://demoacct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&sig=",
		g.s(alnum, 40)+"%2B"+g.s(alnum, 8)+"%3D", "")
	one("digitalocean token", "digitalocean-token", "doctl auth init -t ", "dop_v1_"+g.s(hexLower, 64), "")
	one("heroku api key", "heroku-key", "heroku authorizations:create printed ", "HRKU-"+"AA"+g.s(b64url, 58), "")
	one("heroku legacy api key", "secret", "HEROKU_API_KEY=", g.s(hexLower, 8)+"-"+g.s(hexLower, 4)+"-"+g.s(hexLower, 4)+"-"+g.s(hexLower, 4)+"-"+g.s(hexLower, 12), "")
	one("databricks token", "databricks-token", "databricks configure --token ", "dapi"+g.s(hexLower, 32)+"-2", "")

	// Private keys.
	for _, k := range []struct{ name, label string }{
		{"pem rsa private key", "RSA PRIVATE KEY"}, {"pem ec private key", "EC PRIVATE KEY"},
		{"pem encrypted private key", "ENCRYPTED PRIVATE KEY"}, {"openssh private key", "OPENSSH PRIVATE KEY"},
		{"pgp private key block", "PGP PRIVATE KEY BLOCK"},
	} {
		body := g.pem(3)
		add(k.name, "private-key", "-----BEGIN "+k.label+"-----\n"+strings.Join(body, "\n")+"\n-----END "+k.label+"-----", body...)
	}
	one("age secret key", "age-key", "# created: 2025-01-01\n", "AGE-SECRET-KEY-1"+g.s(upper+digits, 58), "")

	// Tokens in headers and URLs.
	one("jwt", "jwt", "cookie session=", "eyJ"+g.s(b64url, 30)+".eyJ"+g.s(b64url, 60)+"."+g.s(b64url, 43), "; Path=/")
	one("bearer token", "bearer", "Authorization: Bearer ", g.s(b64url, 40), "")
	one("basic auth header", "bearer", "Authorization: Basic ", g.s(b64, 30)+"==", "")
	one("opaque x-api-key header", "secret", "x-api-key: ", g.s(alnum, 40), "")
	one("basic auth url", "url-password", "git clone https://deploy:", g.s(alnum, 20), "@git.example.com/team/app.git")

	// Source hosting and package registries.
	one("github classic token", "github-token", "remote: using ", "ghp_"+g.s(alnum, 36), "")
	one("github fine-grained token", "github-token", "GH_TOKEN was ", "github_pat_"+g.s(alnum, 22)+"_"+g.s(alnum, 59), "")
	one("github oauth token", "github-token", "oauth ", "gho_"+g.s(alnum, 36), "")
	one("github app token", "github-token", "installation ", "ghs_"+g.s(alnum, 36), "")
	one("gitlab personal token", "gitlab-token", "git push https://oauth2@gitlab.com/x.git # ", "glpat-"+g.s(b64url, 20), "")
	one("gitlab routable token", "gitlab-token", "PRIVATE-TOKEN ", "glpat-"+g.s(b64url, 27)+".01."+g.s(alnum, 9), "")
	one("gitlab runner token", "gitlab-token", "gitlab-runner register --token ", "glrt-"+g.s(b64url, 20), "")
	one("npm token", "npm-token", "npm token create printed ", "npm_"+g.s(alnum, 36), "")
	one("pypi token", "pypi-token", "twine upload -p ", "pypi-AgEIcHlwaS5vcmc"+g.s(b64url, 120), " dist/*")
	one("docker hub token", "docker-token", "docker login -u demo -p ", "dckr_pat_"+g.s(b64url, 27), "")
	one("hugging face token", "huggingface-token", "huggingface-cli login --token ", "hf_"+g.s(upper+lower, 34), "")
	one("vault service token", "vault-token", "vault login ", "hvs."+g.s(b64url, 90), "")
	one("vault batch token", "vault-token", "token: ", "hvb."+g.s(b64url, 120), "")

	// Chat, mail and payments.
	one("slack bot token", "slack-token", "SLACK bot ", "xoxb-"+g.s(digits, 12)+"-"+g.s(digits, 13)+"-"+g.s(alnum, 24), "")
	one("slack user token", "slack-token", "user ", "xoxp-"+g.s(digits, 12)+"-"+g.s(digits, 12)+"-"+g.s(digits, 13)+"-"+g.s(hexLower, 32), "")
	one("slack app token", "slack-token", "socket mode with ", "xapp-1-A"+g.s(upper+digits, 10)+"-"+g.s(digits, 13)+"-"+g.s(hexLower, 64), "")
	one("slack refresh token", "slack-token", "rotated ", "xoxe-1-"+g.s(alnum, 140), "")
	one("slack webhook", "slack-webhook", "curl -X POST https://", "hooks.slack.com/services/T"+g.s(upper+digits, 8)+"/B"+g.s(upper+digits, 10)+"/"+g.s(alnum, 24), " -d @msg.json")
	one("discord webhook", "discord-webhook", "POST https://", "discord.com/api/webhooks/"+g.s(digits, 18)+"/"+g.s(b64url, 68), "")
	one("telegram bot token", "telegram-token", "bot ", g.s(digits, 10)+":AA"+g.s(b64url, 33), " started")
	one("telegram bot api url", "telegram-token", "curl -s https://api.telegram.org/bot", g.s(digits, 10)+":AA"+g.s(b64url, 33), "/getUpdates")
	one("discord bot authorization", "discord-token", `curl -H "Authorization: Bot `, g.discord(19), `" https://discord.com/api/v10/users/@me`)
	one("discord token env", "discord-token", "DISCORD_TOKEN=", g.discord(18), "")
	one("discord bot token env", "discord-token", "export DISCORD_BOT_TOKEN=", g.discord(19), "")
	one("linear api key", "linear-key", `curl -H "Authorization: `, "lin_api_"+g.s(alnum, 40), `" https://api.linear.app/graphql`)
	one("postman api key", "postman-key", "postman login --with-api-key ", "PMAK-"+g.s(hexLower, 24)+"-"+g.s(hexLower, 34), "")
	one("doppler service token", "doppler-token", "DOPPLER_TOKEN=", "dp.st.prd."+g.s(alnum, 40), " doppler run -- ./server")
	one("doppler personal token", "doppler-token", "doppler configure set token ", "dp.pt."+g.s(alnum, 43), "")
	one("stripe live secret key", "stripe-key", "Stripe::Api key ", "sk_"+"live_"+g.s(alnum, 99), "")
	one("stripe restricted key", "stripe-key", "restricted ", "rk_"+"live_"+g.s(alnum, 99), "")
	one("stripe webhook secret", "stripe-key", "signing with ", "whsec_"+g.s(alnum, 32), "")
	one("twilio api key", "twilio-key", "twilio api key ", "SK"+g.s(hexLower, 32), "")
	one("twilio auth token", "secret", "TWILIO_AUTH_TOKEN=", g.s(hexLower, 32), "")
	one("sendgrid key", "sendgrid-key", "sendgrid key ", "SG."+g.s(b64url, 22)+"."+g.s(b64url, 43), "")
	one("mailgun key", "mailgun-key", "mailgun: ", "key-"+g.s(hexLower, 32), "")
	one("shopify token", "shopify-token", "X-Shopify-Access-Token ", "shpat_"+g.s(hexLower, 32), "")
	one("cloudflare api token", "secret", "CLOUDFLARE_API_TOKEN=", g.s(b64url, 40), "")

	// Databases and brokers.
	one("postgres url", "url-password", "DATABASE_URL postgres://app:", g.s(alnum, 24), "@db.internal:5432/app?sslmode=require")
	one("mysql url", "url-password", "mysql://root:", g.s(alnum, 18), "@127.0.0.1:3306/shop")
	one("mysql go dsn", "dsn-password", `sql.Open("mysql", "app:`, g.s(alnum, 18), `@tcp(127.0.0.1:3306)/shop?parseTime=true")`)
	one("mongodb srv url", "url-password", "mongosh mongodb+srv://admin:", g.s(alnum, 20), "@cluster0.ab12c.mongodb.net/app")
	one("redis url without user", "url-password", "REDIS redis://:", g.s(alnum, 32), "@cache:6379/0")
	one("amqp url", "url-password", "broker amqp://guest:", g.s(alnum, 16), "@mq:5672/")
	one("mysql command line", "cli-password", "mysql -h db -u root -p", g.s(alnum, 16), " shop < dump.sql")
	one("mysql single-quoted password", "cli-password", "mysql -h db -u root -p'", g.s(alnum, 16), "' shop")
	one("mysqldump double-quoted password", "cli-password", `mysqldump -u backup -p"`, g.s(alnum, 16), `" --all-databases`)
	pg1, pg2 := g.s(alnum, 12), g.s(alnum, 12)
	add("pgpassword with an ampersand", "secret", "PGPASSWORD="+pg1+"&"+pg2+" psql -h db -U app", pg1, pg2)
	pg3, pg4, pg5 := g.s(alnum, 12), g.s(alnum, 12), g.s(alnum, 12)
	add("quoted pgpassword with an ampersand", "secret", "PGPASSWORD='"+pg3+"&"+pg4+";"+pg5+"' pg_dump app > app.sql", pg3, pg4, pg5)
	one("curl basic credentials", "cli-password", "curl -u admin:", g.s(alnum, 16), " https://ci.example.com/api/json")
	one("sshpass", "cli-password", "sshpass -p '", g.s(alnum, 14), "' ssh deploy@host")

	// Configuration files.
	one(".env password", "secret", "DB_PASSWORD=", g.s(alnum, 20), "")
	one(".env quoted password", "secret", `POSTGRES_PASSWORD="`, g.s(alnum, 20), `"`)
	one("json password", "secret", `{"username": "admin", "password": "`, g.s(alnum, 20), `"}`)
	one("yaml client secret", "secret", "  client_secret: ", g.s(b64url, 40), "")
	return fs
}

// Ordinary returns lines of code, commands and prose that share a prefix, a key name or a shape
// with the formats and must come through scrubbing unchanged.
func Ordinary() []string {
	return []string{
		"go test ./... -run TestToken",
		"Read the file pkg/auth/token.go and fix the password reset flow",
		"the tokens field counts input and output",
		"https://github.com/observerhq/observer/blob/main/README.md",
		`dsn := fmt.Sprintf("postgres://%s:%s@%s:%d/%s", user, pass, host, port, db)`,
		`url = f"postgresql://{user}:{password}@{host}/{db}"`,
		`psql "postgres://$PGUSER:$PGPASSWORD@localhost/app"`,
		`psql "postgres://app:${DB_PASS}@localhost/app"`,
		`db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/%s", u, p, h, d))`,
		"postgres://localhost:5432/app",
		"ssh://git@github.com:observerhq/observer.git",
		"kubectl logs pod/my-task-runner-5d8f7c9b6-x2x4z -c worker",
		"kubectl describe disk-provisioner-0123456789abcdef",
		`grep -rn "glpat-" .`,
		"glob-matching global-settings ugly-duckling-is-not-a-token-at-all",
		"the hvs. prefix marks a HashiCorp Vault service token",
		"vault kv get -field=username secret/db",
		`from huggingface_hub import hf_hub_download`,
		`path = hf_hub_download(repo_id="gpt2", filename="config.json")`,
		"See https://api.slack.com/messaging/webhooks before posting to hooks.slack.com",
		`curl -X POST -H 'Content-type: application/json' --data '{"text":"hi"}' "$SLACK_WEBHOOK_URL"`,
		"docker run -u 1000:1000 -p 8080:80 nginx",
		"mysql -u root -p shop < dump.sql",
		`mysql -u root -p"$MYSQL_PWD" shop`,
		`curl -u "$CI_USER:$CI_TOKEN" https://ci.example.com/api/json`,
		"git push -u origin main",
		"mysqldump --single-transaction -p shop > shop.sql",
		`sshpass -p "$SSHPASS" ssh deploy@host`,
		`curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/items`,
		"for key, value := range secrets {",
		"export PATH=$HOME/go/bin:$PATH",
		"npm install --save-dev @types/node",
		"pip install -U sendgrid mailgun twilio stripe",
		"SG.Wait() returned",
		"cache key-value store with key-0 to key-9",
		"sk_test is the prefix Stripe uses for test keys",
		"wg.Wait(); apiKey := cfg.APIKey",
		"if password == \"\" { return errMissingPassword }",
		"func checkPassword(hash []byte, password string) error {",
		"token := tok.Next()",
		"apiToken := os.Getenv(\"CLOUDFLARE_API_TOKEN\")",
		"sessionToken, err := store.Get(ctx, id)",
		"const AccountKeyHeader = \"x-ms-account-key\"",
		"SKU-1234 SKIP_TESTS=1",
		"dapi is the prefix of Databricks personal access tokens",
		"version 10:30:AA build",
		"hf_transfer and api_org_tokens are Hugging Face features",
		"ya29 is the prefix of Google OAuth access tokens",
		"eyJ is how base64 JSON starts",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq7bm6hV3m3UjGZcG4e3Ql4L8XwQ8z1Wv0pQeR2aB3c user@host",
		"sha256:3f4a8c1e9b2d7f6a5c0e1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a6f7e8d9c0b1a2f",
		"commit 3f4a8c1e9b2d7f6a5c0e1d2b3a4f5e6d7c8b9a0f",
		"550e8400-e29b-41d4-a716-446655440000",
		"https://storage.googleapis.com/bucket/object?generation=1700000000000000",
		"https://example.com/search?q=signature&sort=asc",
		"lin_api_ is the prefix of Linear API keys",
		`curl -H "Authorization: Bot $DISCORD_TOKEN" https://discord.com/api/v10/users/@me`,
		`client.run(os.environ["DISCORD_TOKEN"])`,
		"MTLTextureDescriptorHelper.create.withPixelFormatAndDimensionsX",
		"ODataQueryOptionsValidator.Config.SomethingVeryLongPropertyNameHere",
		`aws configure set aws_session_token "$AWS_SESSION_TOKEN"`,
		"aws configure get aws_session_token --profile ci",
		"aws configure set region us-east-1",
		`grep -rn "SessionToken" .`,
		"https://core.telegram.org/bots/api#making-requests",
		`curl "https://api.telegram.org/bot$TELEGRAM_TOKEN/getMe"`,
		`mysql -u root -p"${MYSQL_PWD}" shop`,
		"mysql -u root -p'' shop",
		"PMAK- is the prefix of Postman API keys",
		`postman login --with-api-key "$POSTMAN_API_KEY"`,
		"dp.st. marks a Doppler service token",
		"PGPASSFILE=~/.pgpass psql -h db -U app",
		"OLDPWD=/tmp cd -",
		`echo "a&b" | psql -c 'select 1 & 2'`,
		"",
	}
}
