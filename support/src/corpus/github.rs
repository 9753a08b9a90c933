//! GitHub-like REST responses: repository, issue and commit listings, user search, a user's
//! profile. Field names, order, URL templates and id formats follow api.github.com's.

use super::json::{Json, int, or_null, s};
use super::rng::{HEX, Rng};
use super::text::{FIRST, LAST, TECH, base64, iso, issue_body, moment, prose, sentence, slug};

const API: &str = "https://api.github.com";
/// Users and organisations in the population: ids and logins are functions of the index.
const USERS: usize = 4000;
const ORGS: usize = 40;
/// Repositories per organisation.
const REPOS: usize = 25;

/// A member of the population: the same index gives the same login, name and id in every
/// response (so popular accounts recur across responses, as on a real API).
pub struct Account {
    pub id: u64,
    pub login: String,
    pub name: String,
    pub org: bool,
}

pub fn user(index: usize) -> Account {
    let mut rng = Rng::keyed(0x05e5, index as u64);
    let first = *rng.pick(FIRST);
    let last = *rng.pick(LAST);
    let login = match rng.below(5) {
        0 => format!("{}{}", slug(first), slug(last)),
        1 => format!("{}-{}", slug(first), slug(last)),
        2 => format!("{}{}", slug(first), rng.below(1000)),
        3 => format!("{}{}", &slug(first)[..1], slug(last)),
        _ => format!("{}-{}", slug(last), rng.pick(TECH)),
    };
    Account {
        id: 1_000 + rng.below(190_000_000),
        login,
        name: format!("{first} {last}"),
        org: false,
    }
}

pub fn org(index: usize) -> Account {
    let mut rng = Rng::keyed(0x0a95, index as u64);
    let name = format!("{}-{}", rng.pick(LAST), rng.pick(TECH));
    Account {
        id: 1_000_000 + rng.below(150_000_000),
        login: slug(&name),
        name,
        org: true,
    }
}

/// A popular-first user of the population.
pub fn some_user(rng: &mut Rng) -> Account {
    user(rng.skewed(USERS))
}

/// The "simple user" object GitHub embeds wherever an account is named.
pub fn simple_user(account: &Account) -> Json {
    let login = &account.login;
    let url = format!("{API}/users/{login}");
    let kind = if account.org { "Organization" } else { "User" };
    let node = base64(format!("04:{kind}{}", account.id).as_bytes());
    Json::Obj(vec![
        ("login", s(login.clone())),
        ("id", int(account.id as i64)),
        ("node_id", s(node)),
        (
            "avatar_url",
            s(format!(
                "https://avatars.githubusercontent.com/u/{}?v=4",
                account.id
            )),
        ),
        ("gravatar_id", s("")),
        ("url", s(url.clone())),
        ("html_url", s(format!("https://github.com/{login}"))),
        ("followers_url", s(format!("{url}/followers"))),
        (
            "following_url",
            s(format!("{url}/following{{/other_user}}")),
        ),
        ("gists_url", s(format!("{url}/gists{{/gist_id}}"))),
        (
            "starred_url",
            s(format!("{url}/starred{{/owner}}{{/repo}}")),
        ),
        ("subscriptions_url", s(format!("{url}/subscriptions"))),
        ("organizations_url", s(format!("{url}/orgs"))),
        ("repos_url", s(format!("{url}/repos"))),
        ("events_url", s(format!("{url}/events{{/privacy}}"))),
        ("received_events_url", s(format!("{url}/received_events"))),
        ("type", s(kind)),
        ("user_view_type", s("public")),
        ("site_admin", Json::Bool(false)),
    ])
}

/// A user's profile (`GET /users/{login}`): the simple user and the profile fields.
pub fn profile(rng: &mut Rng) -> Json {
    let account = some_user(rng);
    let Json::Obj(mut fields) = simple_user(&account) else {
        unreachable!()
    };
    let created = moment(rng);
    let optional = |rng: &mut Rng, value: String| or_null(rng.chance(60).then(|| s(value)));
    let company = format!("@{}", org(rng.skewed(ORGS)).login);
    let company = optional(rng, company);
    let blog = optional(rng, format!("https://{}.dev", account.login));
    let location = rng.pick(super::shop::CITIES).0.to_string();
    let location = optional(rng, location);
    let bio = sentence(rng, 3, 16);
    let bio = optional(rng, bio);
    fields.extend([
        ("name", s(account.name)),
        ("company", company),
        ("blog", blog),
        ("location", location),
        ("email", Json::Null),
        (
            "hireable",
            or_null(rng.chance(30).then_some(Json::Bool(true))),
        ),
        ("bio", bio),
        ("twitter_username", Json::Null),
        ("public_repos", int(rng.below(300) as i64)),
        ("public_gists", int(rng.below(40) as i64)),
        ("followers", int(rng.skewed(20_000) as i64)),
        ("following", int(rng.below(200) as i64)),
        ("created_at", s(iso(created))),
        ("updated_at", s(iso(created + rng.below(100_000_000)))),
    ]);
    Json::Obj(fields)
}

/// The URL members of a repository object, after `{API}/repos/{full_name}`.
const REPO_URLS: &[(&str, &str)] = &[
    ("forks_url", "/forks"),
    ("keys_url", "/keys{/key_id}"),
    ("collaborators_url", "/collaborators{/collaborator}"),
    ("teams_url", "/teams"),
    ("hooks_url", "/hooks"),
    ("issue_events_url", "/issues/events{/number}"),
    ("events_url", "/events"),
    ("assignees_url", "/assignees{/user}"),
    ("branches_url", "/branches{/branch}"),
    ("tags_url", "/tags"),
    ("blobs_url", "/git/blobs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"),
    ("git_refs_url", "/git/refs{/sha}"),
    ("trees_url", "/git/trees{/sha}"),
    ("statuses_url", "/statuses/{sha}"),
    ("languages_url", "/languages"),
    ("stargazers_url", "/stargazers"),
    ("contributors_url", "/contributors"),
    ("subscribers_url", "/subscribers"),
    ("subscription_url", "/subscription"),
    ("commits_url", "/commits{/sha}"),
    ("git_commits_url", "/git/commits{/sha}"),
    ("comments_url", "/comments{/number}"),
    ("issue_comment_url", "/issues/comments{/number}"),
    ("contents_url", "/contents/{+path}"),
    ("compare_url", "/compare/{base}...{head}"),
    ("merges_url", "/merges"),
    ("archive_url", "/{archive_format}{/ref}"),
    ("downloads_url", "/downloads"),
    ("issues_url", "/issues{/number}"),
    ("pulls_url", "/pulls{/number}"),
    ("milestones_url", "/milestones{/number}"),
    (
        "notifications_url",
        "/notifications{?since,all,participating}",
    ),
    ("labels_url", "/labels{/name}"),
    ("releases_url", "/releases{/id}"),
    ("deployments_url", "/deployments"),
];

const LANGUAGES: &[&str] = &[
    "Rust",
    "Go",
    "TypeScript",
    "JavaScript",
    "Python",
    "Java",
    "Kotlin",
    "C++",
    "Shell",
];
const LICENSES: &[(&str, &str, &str)] = &[
    ("mit", "MIT License", "MIT"),
    ("apache-2.0", "Apache License 2.0", "Apache-2.0"),
    (
        "bsd-3-clause",
        "BSD 3-Clause \"New\" or \"Revised\" License",
        "BSD-3-Clause",
    ),
    ("mpl-2.0", "Mozilla Public License 2.0", "MPL-2.0"),
];

/// The `i`th repository of `owner`.
fn repo_of(owner: &Account, i: usize) -> String {
    let mut named = Rng::keyed(owner.id, i as u64);
    match named.below(3) {
        0 => named.pick(TECH).to_string(),
        1 => format!("{}-{}", named.pick(TECH), named.pick(TECH)),
        _ => format!(
            "{}-{}",
            owner.login.split('-').next().unwrap_or("x"),
            named.pick(TECH)
        ),
    }
}

/// What the items of one listing share, as on a real API: the organisation or repository
/// listed, and a clock that goes back in time from item to item (newest first).
pub struct Listing {
    owner: Account,
    repo: String,
    clock: u64,
    number: u64,
}

/// A listing of a popular-first repository, as of a moment between 2019 and 2025.
pub fn listing(rng: &mut Rng) -> Listing {
    let owner = org(rng.skewed(ORGS));
    let repo = repo_of(&owner, rng.skewed(REPOS));
    Listing {
        owner,
        repo,
        clock: moment(rng) + 100_000_000,
        number: rng.range(200, 9000),
    }
}

impl Listing {
    /// The time of the next (older) item: up to `gap` seconds before the last one.
    fn earlier(&mut self, rng: &mut Rng, gap: u64) -> u64 {
        self.clock -= rng.below(gap);
        self.clock
    }
}

/// A repository as listed by `GET /orgs/{org}/repos`.
pub fn repo(rng: &mut Rng, list: &mut Listing) -> Json {
    let created = list.earlier(rng, 5_000_000);
    let owner = &list.owner;
    let name = repo_of(owner, rng.skewed(REPOS));
    let full = format!("{}/{name}", owner.login);
    let id = Rng::keyed(owner.id, name.len() as u64).range(10_000_000, 900_000_000);
    let base = format!("{API}/repos/{full}");
    let mut fields = vec![
        ("id", int(id as i64)),
        (
            "node_id",
            s(base64(format!("010:Repository{id}").as_bytes())),
        ),
        ("name", s(name.clone())),
        ("full_name", s(full.clone())),
        ("private", Json::Bool(rng.chance(10))),
        ("owner", simple_user(owner)),
        ("html_url", s(format!("https://github.com/{full}"))),
        (
            "description",
            or_null(rng.chance(85).then(|| s(sentence(rng, 4, 14)))),
        ),
        ("fork", Json::Bool(rng.chance(8))),
        ("url", s(base.clone())),
    ];
    fields.extend(REPO_URLS.iter().map(|(k, v)| (*k, s(format!("{base}{v}")))));
    repo_tail(rng, &full, created, &mut fields);
    Json::Obj(fields)
}

fn license(rng: &mut Rng) -> Json {
    let (key, name, spdx) = *rng.pick(LICENSES);
    Json::Obj(vec![
        ("key", s(key)),
        ("name", s(name)),
        ("spdx_id", s(spdx)),
        ("url", s(format!("{API}/licenses/{key}"))),
        ("node_id", s("MDc6TGljZW5zZTEz")),
    ])
}

fn repo_tail(rng: &mut Rng, full: &str, created: u64, fields: &mut Vec<(&'static str, Json)>) {
    let stars = rng.skewed(50_000) as i64;
    let issues = rng.below(400) as i64;
    let forks = stars / (1 + rng.below(20) as i64);
    let license = rng.chance(80).then(|| license(rng));
    let topics = (0..rng.below(6)).map(|_| s(*rng.pick(TECH))).collect();
    let pushed = created + rng.below(150_000_000);
    fields.extend([
        ("created_at", s(iso(created))),
        ("updated_at", s(iso(pushed + rng.below(1000)))),
        ("pushed_at", s(iso(pushed))),
        ("git_url", s(format!("git://github.com/{full}.git"))),
        ("ssh_url", s(format!("git@github.com:{full}.git"))),
        ("clone_url", s(format!("https://github.com/{full}.git"))),
        ("svn_url", s(format!("https://github.com/{full}"))),
        (
            "homepage",
            or_null(
                rng.chance(30)
                    .then(|| s(format!("https://{}.io", slug(full)))),
            ),
        ),
        ("size", int(rng.below(500_000) as i64)),
        ("stargazers_count", int(stars)),
        ("watchers_count", int(stars)),
        (
            "language",
            or_null(rng.chance(90).then(|| s(*rng.pick(LANGUAGES)))),
        ),
        ("has_issues", Json::Bool(true)),
        ("has_projects", Json::Bool(rng.chance(50))),
        ("has_downloads", Json::Bool(true)),
        ("has_wiki", Json::Bool(rng.chance(40))),
        ("has_pages", Json::Bool(rng.chance(15))),
        ("has_discussions", Json::Bool(rng.chance(25))),
        ("forks_count", int(forks)),
        ("mirror_url", Json::Null),
        ("archived", Json::Bool(rng.chance(5))),
        ("disabled", Json::Bool(false)),
        ("open_issues_count", int(issues)),
        ("license", or_null(license)),
        ("allow_forking", Json::Bool(true)),
        ("is_template", Json::Bool(false)),
        ("web_commit_signoff_required", Json::Bool(false)),
        ("topics", Json::Arr(topics)),
        ("visibility", s("public")),
        ("forks", int(forks)),
        ("open_issues", int(issues)),
        ("watchers", int(stars)),
        (
            "default_branch",
            s(if rng.chance(80) { "main" } else { "master" }),
        ),
    ]);
}

const LABELS: &[(&str, &str, &str)] = &[
    ("bug", "d73a4a", "Something isn't working"),
    ("enhancement", "a2eeef", "New feature or request"),
    (
        "documentation",
        "0075ca",
        "Improvements or additions to documentation",
    ),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("question", "d876e3", "Further information is requested"),
    ("performance", "fbca04", ""),
    ("needs-triage", "ededed", ""),
];
const ASSOCIATIONS: &[&str] = &["NONE", "CONTRIBUTOR", "MEMBER", "OWNER", "COLLABORATOR"];

fn label(repo_base: &str, index: usize) -> Json {
    let (name, color, description) = LABELS[index];
    let id = 400_000_000 + index as i64 * 7_919;
    Json::Obj(vec![
        ("id", int(id)),
        ("node_id", s(base64(format!("010:Label{id}").as_bytes()))),
        (
            "url",
            s(format!("{repo_base}/labels/{}", name.replace(' ', "%20"))),
        ),
        ("name", s(name)),
        ("color", s(color)),
        ("default", Json::Bool(index < 6)),
        (
            "description",
            or_null((!description.is_empty()).then(|| s(description))),
        ),
    ])
}

/// An issue as listed by `GET /repos/{owner}/{repo}/issues`.
pub fn issue(rng: &mut Rng, list: &mut Listing) -> Json {
    let created = list.earlier(rng, 2_000_000);
    list.number = list.number.saturating_sub(rng.range(1, 4)).max(1);
    let number = list.number;
    let (owner, name) = (&list.owner, list.repo.clone());
    let base = format!("{API}/repos/{}/{name}", owner.login);
    let url = format!("{base}/issues/{number}");
    let id = rng.range(1_000_000_000, 3_500_000_000) as i64;
    let author = some_user(rng);
    let labels = (0..rng.below(4))
        .map(|_| label(&base, rng.below(8) as usize))
        .collect();
    let assignee = rng.chance(30).then(|| simple_user(&some_user(rng)));
    let assignees = assignee.iter().cloned().collect();
    let closed = rng.chance(35).then(|| created + rng.below(10_000_000));
    let body = or_null(rng.chance(90).then(|| s(issue_body(rng))));
    let reactions = reactions(rng, &url);
    let html = format!("https://github.com/{}/{name}/issues/{number}", owner.login);
    let mut fields = issue_urls(&base, &url, html);
    fields.extend([
        ("id", int(id)),
        (
            "node_id",
            s(format!("I_kwDO{}", rng.token(super::rng::BASE62, 14))),
        ),
        ("number", int(number as i64)),
        (
            "title",
            s(sentence(rng, 3, 12).trim_end_matches('.').to_string()),
        ),
        ("user", simple_user(&author)),
        ("labels", Json::Arr(labels)),
        ("state", s(if closed.is_some() { "closed" } else { "open" })),
        ("locked", Json::Bool(rng.chance(3))),
        ("assignee", or_null(assignee)),
        ("assignees", Json::Arr(assignees)),
        ("milestone", Json::Null),
        ("comments", int(rng.skewed(120) as i64)),
        ("created_at", s(iso(created))),
        (
            "updated_at",
            s(iso(closed.unwrap_or(created) + rng.below(100_000))),
        ),
        ("closed_at", or_null(closed.map(|t| s(iso(t))))),
        ("author_association", s(*rng.pick(ASSOCIATIONS))),
        ("active_lock_reason", Json::Null),
        ("body", body),
        ("reactions", reactions),
        ("timeline_url", s(format!("{url}/timeline"))),
        ("performed_via_github_app", Json::Null),
        ("state_reason", or_null(closed.map(|_| s("completed")))),
    ]);
    Json::Obj(fields)
}

fn issue_urls(base: &str, url: &str, html: String) -> Vec<(&'static str, Json)> {
    vec![
        ("url", s(url)),
        ("repository_url", s(base)),
        ("labels_url", s(format!("{url}/labels{{/name}}"))),
        ("comments_url", s(format!("{url}/comments"))),
        ("events_url", s(format!("{url}/events"))),
        ("html_url", s(html)),
    ]
}

fn reactions(rng: &mut Rng, issue_url: &str) -> Json {
    let counts: Vec<i64> = (0..8)
        .map(|_| {
            if rng.chance(20) {
                rng.range(1, 30) as i64
            } else {
                0
            }
        })
        .collect();
    let mut fields = vec![
        ("url", s(format!("{issue_url}/reactions"))),
        ("total_count", int(counts.iter().sum::<i64>())),
    ];
    let names = [
        "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes",
    ];
    fields.extend(names.iter().zip(&counts).map(|(k, &n)| (*k, int(n))));
    Json::Obj(fields)
}

/// A commit as listed by `GET /repos/{owner}/{repo}/commits`: hashes are random hex.
pub fn commit(rng: &mut Rng, list: &mut Listing) -> Json {
    let when = iso(list.earlier(rng, 300_000));
    let (owner, name) = (&list.owner, list.repo.clone());
    let base = format!("{API}/repos/{}/{name}", owner.login);
    let sha = rng.token(HEX, 40);
    let tree = rng.token(HEX, 40);
    let author = some_user(rng);
    let person = Json::Obj(vec![
        ("name", s(author.name.clone())),
        (
            "email",
            s(format!("{}@users.noreply.github.com", author.login)),
        ),
        ("date", s(when)),
    ]);
    let node_id = format!("C_kwDO{}", rng.token(super::rng::BASE62, 30));
    let message = if rng.chance(60) {
        sentence(rng, 3, 10)
    } else {
        format!("{}\n\n{}", sentence(rng, 3, 10), prose(rng))
    };
    let parents = (0..rng.range(1, 2))
        .map(|_| parent(rng, &base, &owner.login, &name))
        .collect();
    Json::Obj(vec![
        ("sha", s(sha.clone())),
        ("node_id", s(node_id)),
        (
            "commit",
            Json::Obj(vec![
                ("author", person.clone()),
                ("committer", person),
                ("message", s(message)),
                (
                    "tree",
                    Json::Obj(vec![
                        ("sha", s(tree.clone())),
                        ("url", s(format!("{base}/git/trees/{tree}"))),
                    ]),
                ),
                ("url", s(format!("{base}/git/commits/{sha}"))),
                ("comment_count", int(0)),
                ("verification", verification(rng)),
            ]),
        ),
        ("url", s(format!("{base}/commits/{sha}"))),
        (
            "html_url",
            s(format!(
                "https://github.com/{}/{name}/commit/{sha}",
                owner.login
            )),
        ),
        ("comments_url", s(format!("{base}/commits/{sha}/comments"))),
        ("author", simple_user(&author)),
        ("committer", simple_user(&author)),
        ("parents", Json::Arr(parents)),
    ])
}

fn parent(rng: &mut Rng, base: &str, owner: &str, name: &str) -> Json {
    let sha = rng.token(HEX, 40);
    Json::Obj(vec![
        ("sha", s(sha.clone())),
        ("url", s(format!("{base}/commits/{sha}"))),
        (
            "html_url",
            s(format!("https://github.com/{owner}/{name}/commit/{sha}")),
        ),
    ])
}

fn verification(rng: &mut Rng) -> Json {
    let verified = rng.chance(40);
    Json::Obj(vec![
        ("verified", Json::Bool(verified)),
        ("reason", s(if verified { "valid" } else { "unsigned" })),
        ("signature", Json::Null),
        ("payload", Json::Null),
        ("verified_at", Json::Null),
    ])
}

/// A user found by `GET /search/users`: the simple user and a score.
pub fn search_hit(rng: &mut Rng) -> Json {
    let Json::Obj(mut fields) = simple_user(&some_user(rng)) else {
        unreachable!()
    };
    fields.push(("score", Json::Num("1.0".into())));
    Json::Obj(fields)
}
