/**
 * Cities as they are written in their own language or script, by time zone:
 * "time in 東京" means Tokyo. Lower-case, as messages are matched lower-cased;
 * Latin names with accents (São Paulo, Zürich) need no entry, since accents
 * are ignored when a name is looked up among the IANA zones.
 */
export const NATIVE_CITY_NAMES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    東京: 'Asia/Tokyo',
    とうきょう: 'Asia/Tokyo',
    大阪: 'Asia/Tokyo',
    京都: 'Asia/Tokyo',
    北京: 'Asia/Shanghai',
    上海: 'Asia/Shanghai',
    广州: 'Asia/Shanghai',
    深圳: 'Asia/Shanghai',
    香港: 'Asia/Hong_Kong',
    台北: 'Asia/Taipei',
    臺北: 'Asia/Taipei',
    新加坡: 'Asia/Singapore',
    서울: 'Asia/Seoul',
    부산: 'Asia/Seoul',
    กรุงเทพ: 'Asia/Bangkok',
    'hà nội': 'Asia/Ho_Chi_Minh',
    मुंबई: 'Asia/Kolkata',
    दिल्ली: 'Asia/Kolkata',
    'नई दिल्ली': 'Asia/Kolkata',
    دبي: 'Asia/Dubai',
    تهران: 'Asia/Tehran',
    القاهرة: 'Africa/Cairo',
    ירושלים: 'Asia/Jerusalem',
    'תל אביב': 'Asia/Jerusalem',
    москва: 'Europe/Moscow',
    'санкт-петербург': 'Europe/Moscow',
    київ: 'Europe/Kyiv',
    киев: 'Europe/Kyiv',
    αθήνα: 'Europe/Athens',
    münchen: 'Europe/Berlin',
    köln: 'Europe/Berlin',
    wien: 'Europe/Vienna',
    praha: 'Europe/Prague',
    roma: 'Europe/Rome',
    lisboa: 'Europe/Lisbon',
    warszawa: 'Europe/Warsaw',
    københavn: 'Europe/Copenhagen',
    'ciudad de méxico': 'America/Mexico_City',
  }),
);
