import { decideIntent, visibleReply } from '../server/modules/inbox/intent';
import { labelledReplies } from '../test/api/reply-intent.fixtures';
const all = labelledReplies();
let ok = 0;
for (const r of all) {
  const d = decideIntent(r.body, 'tom@globex.com');
  if (d.intent === r.intent) ok++;
  else console.log(r.lang, r.intent, '->', d.intent, JSON.stringify(visibleReply(r.body)));
  if (r.referral && d.intent === 'wrongPerson' && (r.referral.name !== (d.referral?.name ?? undefined) && r.referral.name || r.referral.email !== (d.referral?.email ?? undefined) && r.referral.email)) console.log('REF', r.referral, d.referral);
}
console.log(ok, all.length, (ok / all.length * 100).toFixed(1));
